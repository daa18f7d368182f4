"""Layer 4 and 5: ChatMessages (the AI SDK ModelMessage shape) and the payloads each provider accepts.

Pure: values in, values out. This package converts shapes, places system text and repairs what a provider
would reject, reporting every repair; it never chooses, trims or compacts history (the projections do).
"""

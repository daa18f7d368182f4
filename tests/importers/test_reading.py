import pytest

from app.importers.imported import ImportRefused
from app.importers.reading import read_json_document, read_json_lines, read_records


def test_each_record_keeps_its_line_number_and_blank_lines_are_not_records() -> None:
    reading = read_json_lines(b'{"a": 1}\n\n  \n{"b": 2}\n')
    assert [(r.line, r.value) for r in reading.records] == [(1, {"a": 1}), (4, {"b": 2})]
    assert reading.invalid == [] and reading.torn_tail is None


def test_a_line_holding_two_objects_gives_both_on_the_same_line() -> None:
    reading = read_json_lines(b'{"a": 1}\n{"b": 2}{"c": 3}\n')
    assert [(r.line, r.value) for r in reading.records] == [(1, {"a": 1}), (2, {"b": 2}), (2, {"c": 3})]


def test_a_line_that_is_not_json_or_not_utf8_is_named_by_its_line() -> None:
    reading = read_json_lines(b'{"a": 1}\nnot json\n\xff\xfe\n{"b": 2}\n')
    assert [(s.line, s.reason.split(" (")[0]) for s in reading.invalid] == [(2, "not JSON"), (3, "not UTF-8")]
    assert [r.line for r in reading.records] == [1, 4]


def test_an_unfinished_last_line_is_a_torn_tail_not_an_error() -> None:
    reading = read_json_lines(b'{"a": 1}\n{"b": ')
    assert reading.torn_tail == 2 and reading.invalid == []
    finished_without_newline = read_json_lines(b'{"a": 1}\n{"b": 2}')
    assert finished_without_newline.torn_tail is None and len(finished_without_newline.records) == 2


def test_nul_and_unpaired_surrogates_come_back_exactly_as_written() -> None:
    reading = read_json_lines(b'{"t": "a\\u0000b"}\n{"t": "half \\ud83d emoji"}\n')
    assert [r.value["t"] for r in reading.records] == ["a\x00b", "half \ud83d emoji"]


def test_a_json_array_is_read_as_records_numbered_from_one() -> None:
    reading = read_records(b' [{"a": 1}, {"b": 2}]')
    assert [(r.line, r.value) for r in reading.records] == [(1, {"a": 1}), (2, {"b": 2})]


def test_a_document_that_is_not_json_is_refused_with_its_line() -> None:
    with pytest.raises(ImportRefused) as refused:
        read_json_document(b'{\n  "a": 1,\n  oops\n}')
    assert refused.value.line == 3 and refused.value.status == 422


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_before_json_lines_is_not_a_line() -> None:
    reading = read_json_lines(BOM + b'{"a": 1}\n{"b": 2}\n')
    assert [(r.line, r.value) for r in reading.records] == [(1, {"a": 1}), (2, {"b": 2})]
    assert reading.invalid == []


def test_a_byte_order_mark_before_a_json_array_or_document_is_dropped() -> None:
    reading = read_records(BOM + b'[{"a": 1}, {"b": 2}]')
    assert [(r.line, r.value) for r in reading.records] == [(1, {"a": 1}), (2, {"b": 2})]
    assert read_json_document(BOM + b'{"messages": []}') == {"messages": []}


def test_a_line_nested_too_deep_to_read_is_named_and_the_others_are_read() -> None:
    deep = b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    reading = read_json_lines(b'{"a": 1}\n' + deep + b'\n{"b": 2}\n')
    assert [r.line for r in reading.records] == [1, 3]
    assert [(s.line, s.reason) for s in reading.invalid] == [(2, "not JSON a reader can follow (nested too deep)")]

from hypothesis import given
from hypothesis import strategies as st

from app.providers.tool_ids import ToolIdMap, all_kept


def test_an_id_that_fits_is_kept() -> None:
    ids = ToolIdMap(40, "openai")
    assert ids("toolu_01ABC-def") == "toolu_01ABC-def"
    assert ids.repairs() == []


def test_a_400_character_id_is_mapped_within_the_limit_the_same_way_every_time() -> None:
    long_id = "call_" + "x" * 395
    first, second = ToolIdMap(40, "openai"), ToolIdMap(40, "openai")
    mapped = first(long_id)
    assert len(mapped) <= 40
    assert mapped == second(long_id) == first(long_id)
    assert [repair.rule for repair in first.repairs()] == ["tool-call-id"]


def test_unsafe_characters_are_replaced_and_the_id_made_unique() -> None:
    ids = ToolIdMap(64, "anthropic")
    mapped = ids("functions.Bash:0")
    assert mapped.startswith("functions_Bash_0_")
    assert ids("functions_Bash_0") == "functions_Bash_0"
    assert mapped != "functions_Bash_0"


def test_ids_that_clean_to_the_same_text_never_collide() -> None:
    ids = ToolIdMap(64, "anthropic")
    mapped = {ids(original) for original in ["a.b", "a:b", "a b", "a_b", "a/b"]}
    assert len(mapped) == 5


def test_long_ids_sharing_a_prefix_stay_distinct() -> None:
    ids = ToolIdMap(40, "openai")
    originals = ["x" * 300 + str(n) for n in range(200)]
    assert len({ids(original) for original in originals}) == 200
    assert all(len(ids(original)) <= 40 for original in originals)


def test_an_id_equal_to_an_earlier_mapping_is_mapped_again() -> None:
    ids = ToolIdMap(64, "anthropic")
    mapped = ids("a.b")
    assert ids(mapped) != mapped


@given(ids=st.lists(st.sampled_from(["call_1", "toolu_01AbC-d", "a.b", "a_b", "x" * 40, "x" * 41, "", "ü", "a b"])))
def test_all_kept_is_true_exactly_when_the_map_keeps_every_id(ids: list[str]) -> None:
    mapping = ToolIdMap(40, "openai")
    assert all_kept(ids, 40) == all(mapping(original) == original for original in ids)

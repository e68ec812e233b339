"""Each tool is one typed definition: its input and output models. The published schemas come from them and keep,
on every property a client relies on, what the hand-written schemas said before the models replaced them
(tests/data/tool_schemas_before_models.json, taken from the registry as it stood then)."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft202012Validator

from memory.tools import REGISTRY
from memory.tools.models import ToolInput, ToolOutput, construct
from memory.tools.registry import ArgumentsRejected

BEFORE = json.loads((Path(__file__).parent / "data" / "tool_schemas_before_models.json").read_text())
# What a client reads from a schema: the rest (descriptions, key order) may change with the wording.
CONTRACT_KEYS = ("type", "enum", "required", "additionalProperties", "minLength", "maxLength", "pattern",
                 "minimum", "maximum", "exclusiveMinimum", "minItems", "maxItems")


def _differences(before: Any, now: Any, where: str, output: bool = False) -> list[str]:
    """What a client of `before` would find broken in `now`. Compatible growth is allowed: a new optional
    argument, a new result property, a result property that is now always present."""
    if not isinstance(before, dict) or not isinstance(now, dict):
        return [] if before == now else [f"{where}: {before!r} became {now!r}"]
    found = []
    for key in CONTRACT_KEYS:
        old, new = before.get(key), now.get(key)
        if key == "type" and old is None and "enum" in before:
            continue  # an enum may name its type now ("type": "string" added): no value it allowed is refused
        if key == "required" and old is not None and new is not None:
            if output and set(old) <= set(new):
                continue
            old, new = sorted(old), sorted(new)
        if old != new:
            found.append(f"{where}.{key}: {old!r} became {new!r}")
    old_props, new_props = before.get("properties", {}), now.get("properties", {})
    added = set(new_props) - set(old_props)
    if set(old_props) - set(new_props) or (added and not output and added & set(now.get("required", []))):
        found.append(f"{where}.properties: {sorted(old_props)} became {sorted(new_props)}")
    for name in set(old_props) & set(new_props):
        found += _differences(old_props[name], new_props[name], f"{where}.{name}", output)
    if "items" in before or "items" in now:
        found += _differences(before.get("items"), now.get("items"), f"{where}[]", output)
    if "anyOf" in before or "anyOf" in now:
        old_any, new_any = before.get("anyOf", []), now.get("anyOf", [])
        if len(old_any) != len(new_any):
            found.append(f"{where}.anyOf: {old_any!r} became {new_any!r}")
        for i, (old, new) in enumerate(zip(old_any, new_any)):
            found += _differences(old, new, f"{where}.anyOf[{i}]", output)
    return found


def test_every_tool_of_before_is_still_there():
    assert set(BEFORE) <= set(REGISTRY)


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_generated_schemas_keep_the_contract(name):
    spec = REGISTRY[name]
    problems = (_differences(BEFORE[name]["input"], spec.input_schema, f"{name} input")
                + _differences(BEFORE[name]["output"], spec.output_schema, f"{name} output", output=True))
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_a_changed_limit():
    """The contract check is not vacuous: a tightened limit, a new required argument or a lost property fail."""
    before = BEFORE["query_logic"]["input"]
    tighter = json.loads(json.dumps(before))
    tighter["properties"]["limit"]["maximum"] = 10
    assert _differences(before, tighter, "q") == ["q.limit.maximum: 10000 became 10"]
    stricter = {**before, "required": ["goal", "memory"]}
    assert _differences(before, stricter, "q")
    lost = {**before, "properties": {k: v for k, v in before["properties"].items() if k != "offset"}}
    assert _differences(before, lost, "q")
    required_new = {**before, "properties": {**before["properties"], "page": {"type": "integer"}},
                    "required": [*before["required"], "page"]}
    assert _differences(before, required_new, "q")  # a new required argument breaks every caller
    optional_new = {**before, "properties": {**before["properties"], "page": {"type": "integer"}}}
    assert not _differences(before, optional_new, "q")
    out = BEFORE["query_logic"]["output"]
    assert not _differences(out, {**out, "properties": {**out["properties"], "note": {"type": "string"}}}, "o", True)
    assert _differences(out, {**out, "required": out["required"][1:]}, "o", True)  # a promised key may go


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_tool_is_its_models(name):
    spec = REGISTRY[name]
    assert issubclass(spec.input_model, ToolInput) and issubclass(spec.output_model, ToolOutput)
    schema = spec.input_schema
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == list(spec.input_model.model_fields)
    assert schema["required"] == [n for n, f in spec.input_model.model_fields.items() if f.is_required()]
    assert list(spec.output_schema["properties"]) == list(spec.output_model.model_fields)
    Draft202012Validator.check_schema(schema)
    Draft202012Validator.check_schema(spec.output_schema)
    # The subset every host accepts: no references, no titles, no null types.
    published = json.dumps([schema, spec.output_schema])
    assert "$ref" not in published and '"title"' not in published and '"null"' not in published.replace(
        '{"type": "null"}', "")


def _value(prop: dict) -> st.SearchStrategy:
    """A value the published schema accepts, of its declared shape."""
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if "anyOf" in prop:
        return st.one_of(*[_value(option) for option in prop["anyOf"]])
    kind = prop.get("type")
    if kind == "string":
        if "pattern" in prop:
            return st.from_regex(prop["pattern"], fullmatch=True).filter(
                lambda s: len(s) <= prop.get("maxLength", 10 ** 9) and len(s) >= prop.get("minLength", 0))
        return st.text(min_size=prop.get("minLength", 0), max_size=min(prop.get("maxLength", 20), 20))
    if kind == "integer":
        return st.integers(prop.get("minimum", -(2 ** 40)), min(prop.get("maximum", 2 ** 40), 2 ** 40))
    if kind == "number":
        low = prop.get("minimum", prop.get("exclusiveMinimum", -1e6))
        return st.floats(low, prop.get("maximum", 1e6), exclude_min="exclusiveMinimum" in prop, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_value(prop.get("items", {"type": "string"})), min_size=prop.get("minItems", 0),
                        max_size=min(prop.get("maxItems", 3), 3))
    if kind == "object":
        props = prop.get("properties", {})
        required = set(prop.get("required", []))
        return st.fixed_dictionaries({k: _value(v) for k, v in props.items() if k in required},
                                     optional={k: _value(v) for k, v in props.items() if k not in required})
    return st.none()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_checked_arguments_round_trip_through_the_input_model(name):
    """Law: arguments the schema accepts become the input model unchanged (every JSON value keeps its type:
    an integer where a number is allowed stays an integer), and only the arguments given count as set."""
    spec = REGISTRY[name]

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_value(spec.input_schema))
    def check(arguments):
        model = spec.parse_arguments(arguments)
        assert model.model_dump(exclude_unset=True, mode="python") == arguments
        for key, value in arguments.items():
            assert type(_plain(getattr(model, key))) is type(value)

    check()


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.model_dump(exclude_unset=True) if hasattr(value, "model_dump") else value


def test_unknown_and_ill_typed_arguments_are_refused_with_the_schema_words():
    spec = REGISTRY["query_logic"]
    with pytest.raises(ArgumentsRejected) as info:
        spec.parse_arguments({"goal": "p(X)", "limt": 5})
    assert "Additional properties are not allowed ('limt' was unexpected); the arguments are: goal, memory, " \
           "limit, offset" in str(info.value)
    with pytest.raises(ArgumentsRejected) as info:
        spec.parse_arguments({"goal": "p(X)", "limit": "5"})
    assert "'limit': '5' is not of type 'integer'" in str(info.value)
    assert spec.parse_arguments({"goal": "p(X)", "limit": 2.0}).limit == 2  # JSON Schema's integer 2.0


def test_construct_builds_nested_models():
    spec = REGISTRY["memory_remember"]
    model = construct(spec.input_model, {"memory": "m", "projections": [
        {"predicate": "p", "arguments": ["a", 1, 2.5, True], "statement": "s"}]})
    (projection,) = model.projections
    assert projection.arguments == ["a", 1, 2.5, True]
    assert [type(a) for a in projection.arguments] == [str, int, float, bool]
    assert projection.model_dump(exclude_unset=True) == {"predicate": "p", "arguments": ["a", 1, 2.5, True],
                                                         "statement": "s"}


def _models_in(annotation, seen):
    import typing
    from pydantic import BaseModel
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation not in seen:
            seen.add(annotation)
            for field in annotation.model_fields.values():
                _models_in(field.annotation, seen)
        return
    for arg in typing.get_args(annotation):
        _models_in(arg, seen)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_structured_results_keep_every_key_the_service_gave(name):
    """An output model and every object nested in it keep keys it does not declare (output schemas are open):
    a nested model that dropped them would cut recall's parsed.window out of the result."""
    found: set = set()
    _models_in(REGISTRY[name].output_model, found)
    assert all(model.model_config.get("extra") == "allow" for model in found), \
        [model.__name__ for model in found if model.model_config.get("extra") != "allow"]

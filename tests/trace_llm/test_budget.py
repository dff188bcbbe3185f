"""trace_llm.budget: the longest reply a schema allows under a grammar, the schema fitted to a token budget, and
the smallest budget in which a constrained reply always closes."""

from __future__ import annotations

import pytest

from trace_llm.budget import BudgetTooSmall, fit_schema, longest, smallest_budget
from trace_llm.jsonout import validation_errors

LABELS = [f"P{i}" for i in range(1, 17)]
RANKING = {
    "type": "object",
    "properties": {
        "ranked_ids": {
            "type": "array",
            "items": {"type": "string", "enum": LABELS},
            "minItems": 1,
            "maxItems": 16,
        },
        "response": {"type": "string", "minLength": 1, "maxLength": 450},
    },
    "required": ["ranked_ids", "response"],
    "additionalProperties": False,
}


def spaced(ids: list[str], response: str) -> str:
    """The reply with every optional space llama.cpp's converter allows (after each token and value)."""
    items = ", ".join(f'"{i}" ' for i in ids)
    return f'{{ "ranked_ids" : [ {items}] , "response" : "{response}" }} '


def test_the_longest_reply_is_exactly_the_most_spaced_fullest_one():
    assert longest(RANKING) == len(spaced(["P16"] * 16, "9" * 450))
    assert smallest_budget(RANKING) == len(spaced(["P16"], "9"))


@pytest.mark.parametrize("budget", [48, 60, 160, 300, 616])
def test_a_fitted_schema_closes_within_the_budget_and_stays_within_the_original(budget):
    fitted = fit_schema(RANKING, budget)
    assert longest(fitted) <= budget
    ids, chars = fitted["properties"]["ranked_ids"]["maxItems"], fitted["properties"]["response"]["maxLength"]
    fullest = {"ranked_ids": ["P16"] * ids, "response": "9" * chars}
    assert len(spaced(fullest["ranked_ids"], fullest["response"])) <= budget
    assert validation_errors(fullest, RANKING) == []  # what the fitted grammar allows, the schema accepts
    assert 1 <= ids <= 16 and 1 <= chars <= 450


def test_a_schema_that_fits_is_left_as_it_is_and_less_than_the_smallest_budget_is_refused():
    assert fit_schema(RANKING, 617) is RANKING  # same grammar, same cache keys, same replies
    with pytest.raises(BudgetTooSmall, match=r"max_new_tokens=47 is below the 48 tokens .* at least 48"):
        fit_schema(RANKING, 47)


def test_free_lengths_without_bounds_get_them_and_unboundable_schemas_are_left_alone():
    free = {
        "type": "object",
        "properties": {"why": {"type": "string"}},
    }  # no other key: the grammars' reading
    assert longest(free) is None
    fitted = fit_schema(free, 100)
    assert longest(fitted) <= 100 and fitted["properties"]["why"]["maxLength"] > 50
    open_object = {"type": "object", "properties": {"why": {"type": "string"}}, "additionalProperties": True}
    assert smallest_budget(open_object) is None and fit_schema(open_object, 10) is open_object
    choice = {"anyOf": [{"type": "string", "maxLength": 500}, {"type": "null"}]}
    assert longest(fit_schema(choice, 40)) <= 40


def test_the_layer_fits_every_constrained_request_and_refuses_a_budget_too_small():
    from trace_llm.budget import fit_constraint
    from trace_llm.structured import Constraint

    constraint = Constraint.json(RANKING)
    assert fit_constraint(constraint, 617) is constraint  # fits: the same grammar and cache keys
    fitted = fit_constraint(constraint, 160)
    assert longest(fitted.schema) <= 160 and fitted.digest != constraint.digest
    with pytest.raises(BudgetTooSmall, match="at least 48"):
        fit_constraint(constraint, 20)


def test_the_least_budget_of_a_callers_schemas_is_the_largest_and_a_caller_names_its_option():
    from trace_llm.budget import least_budget, require_budget

    response = RANKING["properties"]["response"]
    small = {"type": "object", "properties": {"response": response}, "required": ["response"]}
    small["additionalProperties"] = False
    assert least_budget({"ranking": RANKING, "response": small}) == (48, "ranking")
    assert least_budget({"free": {"type": "object", "additionalProperties": True}}) is None
    require_budget({"ranking": RANKING}, 48, "zero_shot", "--max-new-tokens")  # enough: nothing said
    with pytest.raises(
        BudgetTooSmall, match=r"^zero_shot: max_new_tokens=47 .* its ranking .* raise --flag to at least 48$"
    ):
        require_budget({"ranking": RANKING, "response": small}, 47, "zero_shot", "--flag")


def test_a_server_gets_the_fitted_schema_and_the_prompt_keeps_the_callers():
    import json

    from tests.support.stub_server import StubOpenAI
    from trace_llm import DecodingSettings, load_llm
    from trace_llm.structured import SERVER_DIALECT_MEMORY

    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    SERVER_DIALECT_MEMORY.forget()
    with StubOpenAI(lambda body: (200, json.dumps({"name": "Cafe Uno"}))) as stub:
        llm = load_llm(
            stub.spec(), DecodingSettings(max_new_tokens=60), cache_path=False, structured="json_schema"
        )
        assert llm.generate_json([{"role": "user", "content": "Name one cafe."}], schema) == {
            "name": "Cafe Uno"
        }
    (body,) = stub.requests
    sent = body["response_format"]["json_schema"]["schema"]
    assert longest(sent) <= 60 and sent["properties"]["name"]["maxLength"] >= 40
    assert '"maxLength"' not in body["messages"][-1]["content"]  # the prompt shows the caller's schema

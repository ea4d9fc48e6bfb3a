"""mathstress inject-external: one labelled error in solutions we did not write, checked before it is kept."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from synth.cli import app
from synth.errors import ConfigError, EvalFailuresError
from synth.external_chains import parse_chain, value_of, verify_chain
from synth.inject_external import check_call_failures, inject_external
from tests.evaluate._http import Scripted, completion, send_json, serve

GSM8K = [
    {"id": "g1", "question": "Natalia sold clips to 48 friends in April and half as many in May. How many in all?",
     "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
               "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"},
    {"id": "g2", "question": "Weng earns $12 an hour. She babysat for 50 minutes. How much did she earn?",
     "answer": "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\n"
               "Working 50 minutes, she earned 0.2 x 50 = $<<0.2*50=10>>10.\n#### 10"},
    {"id": "g3", "question": "Betty needs $100. She has half, her parents give $15 and her grandparents twice "
                             "as much. How much more does she need?",
     "answer": "In the beginning, Betty has only 100 / 2 = $<<100/2=50>>50.\n"
               "Betty's grandparents gave her 15 * 2 = $<<15*2=30>>30.\n"
               "This means, Betty needs 100 - 50 - 30 - 15 = $<<100-50-30-15=5>>5 more.\n#### 5"},
    {"id": "g4", "question": "Julie read 12 pages yesterday and twice as many today. How many pages so far?",
     "answer": "Today she read 12 x 2 = <<12*2=24>>24 pages.\n"
               "So far she read 12 + 24 = <<12+24=36>>36 pages.\n#### 36"},
    {"id": "g5", "question": "What is 2 + 2?", "answer": "Add them.\n#### 4"},  # nothing to edit: skipped
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- offline: our slips and notational edits, labels from the verifier -----------------------------------------


def test_offline_errors_in_gsm8k_solutions_are_labelled_by_the_verifier(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K)
    result = inject_external(data, tmp_path / "out", contract="fermat", model="offline", seed=3)
    rows = [json.loads(line) for line in (tmp_path / "out" / "injected.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["g1", "g2", "g3", "g4"]
    assert result.funnel["skipped"] == {"no_calculation_in_solution": 1}
    for row in rows:
        err = row["error"]
        # Relabel from scratch: the shown chain against the reference chain's results.
        reference = parse_chain(row["reference_solution"].splitlines())
        shown = parse_chain(row["solution"].splitlines())
        verdict = verify_chain(shown, reference=[value_of(c.rhs) for c in reference.claims],
                               truth=row["gold_answer"])
        assert row["first_error_step_verified"] == err["first_error_step"] == verdict.first_error_line
        assert err["error_steps"] == list(verdict.error_lines)
        assert err["subtype"] in ("intermediate_propagated", "final_number", "intermediate_corrected",
                                  "operator_swap")
        assert err["label"] == {"computational": "CO", "notational": "NO"}[err["family"]]
        changed = value_of(row["final_answer"]) != value_of(row["gold_answer"])
        assert changed == err["answer_changed"] == (err["subtype"] in ("intermediate_propagated", "final_number"))
        assert len(row["steps"]) == len(reference.lines)


def test_negative_results_keep_one_sign_and_golds_that_are_not_numbers_are_skipped(tmp_path: Path) -> None:
    # A slipped negative result was written "--9" (its minus kept, number_text's added); a gold "4 cm" made every
    # edit count as changing the answer (its value unknown), so kept rows claimed answer_changed with the gold shown.
    rows = [{"id": f"n{i}", "question": "q",
             "answer": f"2 + {i} = <<2+{i}={2 + i}>>{2 + i}\n{2 + i} - {9 + i} = <<{2 + i}-{9 + i}={-7}>>-7\n"
                       f"-7 * 2 = <<-7*2=-14>>-14\n#### -14"} for i in range(8)]
    rows += [{"id": f"u{i}", "question": "q", "answer": f"3 + {i} = <<3+{i}={3 + i}>>{3 + i}\n#### {3 + i} cm"}
             for i in range(3)]
    data = write_jsonl(tmp_path / "neg.jsonl", rows)
    result = inject_external(data, tmp_path / "out", contract="fermat", model="offline", seed=5)
    kept = [json.loads(line) for line in (tmp_path / "out" / "injected.jsonl").read_text().splitlines()]
    assert kept and all(r["id"].startswith("n") for r in kept)
    for row in kept:
        assert "--" not in row["solution"] and "−−" not in row["solution"], row["solution"]
        shown = parse_chain(row["solution"].splitlines())
        assert shown is not None and len(shown.claims) == 3
        assert (value_of(row["final_answer"]) != value_of(row["gold_answer"])) == row["error"]["answer_changed"]
    assert "gold_not_a_number" in json.dumps(result.funnel)


def test_a_propagated_slip_carries_through_gsm8k_annotations_and_the_shown_numbers(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K[:4])
    subtypes = {}
    for seed in range(12):  # the edit is drawn per problem; some seed gives each kind
        inject_external(data, tmp_path / "out", contract="mmerror", model="offline", seed=seed)
        for line in (tmp_path / "out" / "injected.jsonl").read_text().splitlines():
            row = json.loads(line)
            subtypes.setdefault(row["error"]["subtype"], row)
    assert set(subtypes) == {"intermediate_propagated", "final_number", "intermediate_corrected", "operator_swap"}
    row = subtypes["intermediate_propagated"]
    assert row["error"]["propagated"] and len(row["error"]["error_steps"]) >= 2 and row["error"]["label"] == "B"
    first = row["error"]["first_error_step"]
    for n, step in enumerate(row["steps"], start=1):
        for lhs, rhs, shown in re.findall(r"<<([^=]+)=([^>]+)>>([\d.]+)", step):
            assert value_of(rhs) == value_of(shown)  # the line shows the result its annotation states
            assert (value_of(lhs) == value_of(rhs)) == (n != first)  # only the slip is false; later lines carry it
    swap = subtypes["operator_swap"]
    assert not swap["error"]["answer_changed"] and swap["final_answer"] == swap["gold_answer"]


# -- a model behind an OpenAI-compatible endpoint ------------------------------------------------------------

REPLIES = {
    # good: one computational error, carried to a different final answer
    "Natalia": {"steps": ["In May she sold 48 / 2 = 26 clips.", "In all she sold 48 + 26 = 74 clips."],
                "final_answer": "74", "error_type": "B", "error_step": 1},
    # mislabelled: E is not one of MMErroR's four types
    "Weng": {"steps": ["Per minute 12 / 60 = 0.2 dollars.", "She earned 0.2 × 60 = 12 dollars."],
             "final_answer": "12", "error_type": "E", "error_step": 2},
    # answer-preserving: the 'error' does not change the answer
    "Betty": {"steps": ["She has 100 / 2 = 50.", "Grandparents give 15 × 2 = 30.", "She needs 100 - 50 - 30 - 15 = 5."],
              "final_answer": "5", "error_type": "B", "error_step": 3},
    # gives itself away: the chain names the mistake
    "Julie": {"steps": ["Today she read 12 × 3 = 36 pages (oops, a mistake).", "So far 12 + 36 = 48 pages."],
              "final_answer": "48", "error_type": "B", "error_step": 1},
}


def reply_for(handler: Any, body: dict[str, Any]) -> None:
    text = next(p["text"] for p in body["messages"][0]["content"] if p["type"] == "text")
    problem = re.search(r"Problem: (\w+)", text).group(1)
    if problem == "Kim":  # malformed: no JSON at all
        content = "Here is a solution with an error: first add, then multiply."
    elif problem == "Ravi":  # a verified error the model places at step 2 but the chain shows at step 1
        content = json.dumps({"steps": ["He has 7 × 8 = 54 stamps.", "He gives away 4, so 54 - 4 = 50."],
                              "final_answer": "50", "error_type": "B", "error_step": 2})
    elif problem == "A":  # a wrong formula with right arithmetic: nothing false for the verifier to find
        content = json.dumps({"steps": ["The area is base times height.", "10 × 6 = 60"], "final_answer": "60",
                              "error_type": "D", "error_step": 1})
    elif problem == "Omar":  # a calculation our parser cannot read: kept, but unverified
        content = json.dumps({"steps": ["He has (5 + 3 = 8 boxes.", "So 8 × 2 = 18 books."], "final_answer": "18",
                              "error_type": "B", "error_step": 2})
    else:
        content = "```json\n" + json.dumps(REPLIES[problem]) + "\n```"
    send_json(handler, 200, completion(body["model"], content, {"prompt_tokens": 50, "completion_tokens": 20}))


MODEL_PROBLEMS = [*GSM8K[:4],
                  {"id": "k1", "question": "Kim buys 3 packs of 4 pens. How many pens?", "answer": "12"},
                  {"id": "r1", "question": "Ravi has 7 sheets of 8 stamps and gives 4 away. How many are left?",
                   "answer": "52"},
                  {"id": "t1", "question": "A triangle has base 10 and height 6. What is its area?", "answer": "30"},
                  {"id": "o1", "question": "Omar has 5 boxes and gets 3 more, 2 books in each. How many books?",
                   "answer": "16"}]


def test_a_model_behind_a_fake_endpoint_is_kept_only_when_every_check_passes(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_jsonl(tmp_path / "problems.jsonl", MODEL_PROBLEMS)
    fake = Scripted(lambda n, body: reply_for)
    with serve(fake, monkeypatch, "sk-test-0123456789abcdef") as url:
        result = inject_external(data, tmp_path / "out", contract="mmerror", model="openai:fake", base_url=url)
        assert fake.calls == 8
        funnel = result.funnel
        assert funnel["rejected"] == {"answer_preserved": 1, "bad_label": 1, "malformed": 1, "mentions_error": 1}
        assert (funnel["asked"], funnel["kept"], funnel["failed_calls"]) == (8, 4, 0)
        assert funnel["verification"] == {"no_false_claim": 1, "unverified": 1, "verified": 2}
        rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out" / "injected.jsonl").read_text().splitlines())}
        assert set(rows) == {"g1", "r1", "t1", "o1"}
        assert [(rows[i]["verification"], rows[i]["first_error_step_verified"]) for i in ("t1", "o1")] == \
            [("no_false_claim", None), ("unverified", None)]
        assert rows["g1"]["error"] == {"label": "B", "label_name": "B_Reasoning_Error", "first_error_step": 1,
                                       "explanation": None}
        assert (rows["g1"]["first_error_step_verified"], rows["g1"]["verification"], rows["g1"]["agrees"]) == \
            (1, "verified", True)
        assert (rows["r1"]["first_error_step_verified"], rows["r1"]["agrees"]) == (1, False)
        reasons = {r["id"]: r["reason"] for r in funnel["rejections"]}
        assert reasons == {"g2": "bad_label", "g3": "answer_preserved", "g4": "mentions_error", "k1": "malformed"}
        # Re-running the same command is resume: every reply comes from the cache, same rows, same funnel.
        again = inject_external(data, tmp_path / "out", contract="mmerror", model="openai:fake", base_url=url)
        assert fake.calls == 8 and again.funnel["cached"] == 8
        assert {k: again.funnel[k] for k in ("rejected", "kept")} == {k: funnel[k] for k in ("rejected", "kept")}
    stored = sqlite3.connect(tmp_path / "out" / "cache.sqlite").execute(
        "SELECT task, status, response FROM responses").fetchall()
    assert len(stored) == 8 and {t for t, _, _ in stored} == {"inject-mmerror"}
    assert not any("sk-test" in (r or "") for _, _, r in stored)


def test_fermat_asks_for_one_type_with_three_examples_and_a_reply_of_another_type_is_mislabelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K[:2])
    prompts: list[str] = []

    def reply(handler: Any, body: dict[str, Any]) -> None:
        text = body["messages"][0]["content"][0]["text"]
        prompts.append(text)
        asked = re.search(r'"perturbation_type": "(\w\w)"', text.rsplit("Reply with", 1)[1]).group(1)
        natalia = "Natalia" in text.split("Now the problem")[1]
        payload = {"perturbed_solution": ["Natalia sold 48/2 = 25 clips in May.", "In all 48 + 25 = 73 clips."],
                   "final_answer": "73", "perturbation_type": asked if natalia else "PR", "error_step": 1,
                   "explanation": "Step 1 divides 48 by 2 as 25."}
        send_json(handler, 200, completion(body["model"], json.dumps(payload), {}))

    with serve(Scripted(lambda n, body: reply), monkeypatch, "sk-test-0123456789abcdef") as url:
        result = inject_external(data, tmp_path / "out", contract="fermat", model="openai:fake", base_url=url,
                                 types=["CO"])
    natalia = next(p for p in prompts if "Natalia" in p.split("Now the problem")[1])
    assert natalia.count("Example ") == 3 and "one computational error (CO)" in natalia
    assert GSM8K[0]["answer"].split("\n#### ")[0] in natalia.split("Now the problem")[1]  # the reference to perturb
    assert result.funnel["rejected"] == {"bad_label": 1} and result.funnel["kept"] == 1
    row = json.loads((tmp_path / "out" / "injected.jsonl").read_text())
    assert (row["error"]["label"], row["error"]["label_name"], row["error"]["explanation"]) == \
        ("CO", "Computational", "Step 1 divides 48 by 2 as 25.")


def test_failed_calls_are_stored_never_kept_and_exit_4_until_a_rerun_succeeds(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_jsonl(tmp_path / "problems.jsonl", MODEL_PROBLEMS[:1])
    down = Scripted(lambda n, body: lambda h, b: send_json(h, 503, {"error": {"message": "overloaded"}}))
    with serve(down, monkeypatch, "sk-test-0123456789abcdef") as url:
        first = inject_external(data, tmp_path / "out", contract="mmerror", model="openai:fake", base_url=url,
                                max_retries=0)
    assert first.rows == 0 and first.funnel["failed_by_reason"] == {"HTTP 503: overloaded": 1}
    with pytest.raises(EvalFailuresError, match="1 of 1 calls failed"):
        check_call_failures(first)
    with serve(Scripted(lambda n, body: reply_for), monkeypatch, "sk-test-0123456789abcdef") as url:
        second = inject_external(data, tmp_path / "out", contract="mmerror", model="openai:fake", base_url=url)
    assert second.rows == 1 and second.funnel["failed_calls"] == 0
    check_call_failures(second)


def test_an_image_travels_with_the_request_and_is_kept_beside_the_rows(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    Image.fromarray(np.full((40, 60, 3), 200, np.uint8)).save(tmp_path / "fig.png")
    (tmp_path / "broken.png").write_bytes(b"not an image")
    rows = [dict(MODEL_PROBLEMS[0], image="fig.png"), dict(GSM8K[3], id="bad", image="broken.png")]
    data = write_jsonl(tmp_path / "problems.jsonl", rows)
    seen: list[list[str]] = []

    def reply(handler: Any, body: dict[str, Any]) -> None:
        seen.append([p["type"] for p in body["messages"][0]["content"]])
        reply_for(handler, body)

    with serve(Scripted(lambda n, body: reply), monkeypatch, "sk-test-0123456789abcdef") as url:
        result = inject_external(data, tmp_path / "out", contract="mmerror", model="openai:fake", base_url=url)
    assert seen == [["text", "image_url"]]
    assert result.funnel["skipped"] == {"image_unreadable": 1}
    row = json.loads((tmp_path / "out" / "injected.jsonl").read_text())
    assert row["image"] == "images/000000.png" and (tmp_path / "out" / row["image"]).is_file()


def test_bad_options_and_foreign_folders_are_refused_with_exit_2(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K[:1])
    with pytest.raises(ConfigError, match="--contract must be one of"):
        inject_external(data, tmp_path / "out", contract="errorradar", model="offline")
    with pytest.raises(ConfigError, match="--types"):
        inject_external(data, tmp_path / "out", contract="fermat", model="offline", types=["XX"])
    cli = CliRunner()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("keep")
    refused = cli.invoke(app, ["inject-external", str(data), "--out", str(mine), "--contract", "fermat"])
    assert refused.exit_code == 2 and "not written by mathstress" in refused.output
    wrong_model = cli.invoke(app, ["inject-external", str(data), "--out", str(tmp_path / "o"), "--contract",
                                   "mmerror", "--model", "random"])
    assert wrong_model.exit_code == 2 and "openai:<model>" in wrong_model.output
    ok = cli.invoke(app, ["inject-external", str(data), "--out", str(tmp_path / "o"), "--contract", "fermat"])
    assert ok.exit_code == 0 and "kept" in ok.output and "wrote 1 row " in ok.output


def test_latex_operators_do_not_leave_a_false_half_claim() -> None:
    # "$3 \cdot 4 = 12$" was read as the claim "4 = 12": a correct reply's first wrong step was line 1.
    chain = parse_chain(["We have $3 \\cdot 4 = 12$ apples.", "Then $12 \\div 3 = 4$ each.", "So 12 + 1 = 14."])
    assert chain is not None and [c.math for c in chain.claims] == ["12 + 1 = 14"]
    verdict = verify_chain(chain, reference=None, truth="13")
    assert verdict.first_error_line == 3


def test_an_id_given_twice_is_refused_before_any_work(tmp_path: Path) -> None:
    # 60,000 rows with 3,000 ids were kept as rows sharing ids; a row without an id took its index ("1"), which can
    # be another row's id.
    rows = [dict(GSM8K[0], id="a"), dict(GSM8K[1], id="b"), dict(GSM8K[3], id="a")]
    with pytest.raises(ConfigError, match="rows 1 and 3 both have the id 'a'"):
        inject_external(write_jsonl(tmp_path / "dup.jsonl", rows), tmp_path / "out", contract="fermat",
                        model="offline")
    collide = [dict(GSM8K[0], id="1"), {k: v for k, v in GSM8K[1].items() if k != "id"}]
    with pytest.raises(ConfigError, match="both have the id '1'"):
        inject_external(write_jsonl(tmp_path / "collide.jsonl", collide), tmp_path / "out", contract="fermat",
                        model="offline")
    assert not (tmp_path / "out").exists()


def test_offline_types_choose_the_edits_and_types_it_cannot_make_are_refused(tmp_path: Path) -> None:
    # --types CO,PR offline wrote CO and NO rows, with nothing said; --types on mmerror was ignored too.
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K)
    for kind in ("CO", "NO"):
        inject_external(data, tmp_path / kind, contract="fermat", model="offline", types=[kind])
        rows = [json.loads(line) for line in (tmp_path / kind / "injected.jsonl").read_text().splitlines()]
        assert rows and {r["error"]["label"] for r in rows} == {kind}
    with pytest.raises(ConfigError, match=r"make only \['CO', 'NO'\].*not \['PR'\]"):
        inject_external(data, tmp_path / "pr", contract="fermat", model="offline", types=["CO", "PR"])
    with pytest.raises(ConfigError, match="asks for no type"):
        inject_external(data, tmp_path / "mm", contract="mmerror", model="offline", types=["CO"])
    assert not (tmp_path / "pr").exists() and not (tmp_path / "mm").exists()

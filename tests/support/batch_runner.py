"""A small stand-in for vLLM's `run_batch` (or a hosted Batch API): answer every line of an OpenAI batch input
file through a live OpenAI-compatible server and write the OpenAI batch output file.

    python -m tests.support.batch_runner -i IN.jsonl -o OUT.jsonl --model MODEL --url http://127.0.0.1:PORT
    answer_batch_file(IN, OUT, "http://127.0.0.1:PORT", model="other")   # model: override every body's model

Output line (the OpenAI batch output format): {"id", "custom_id", "response": {"status_code", "request_id",
"body"}, "error"}. Lines are answered one at a time, in order (the test servers are small).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import httpx


def answer_batch_file(
    input_path: str | Path,
    output_path: str | Path,
    url: str,
    *,
    model: str | None = None,
    drop: int = 0,
    timeout: float = 600.0,
) -> int:
    """Answer every request of `input_path`; `drop` leaves out the last N lines (a damaged output file)."""
    lines = [
        json.loads(line) for line in Path(input_path).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    out = []
    with httpx.Client(timeout=timeout) as client:
        for i, request in enumerate(lines):
            body = dict(request["body"])
            if model is not None:
                body["model"] = model
            response = client.post(url.rstrip("/") + request["url"], json=body)
            answer = response.json() if response.status_code == 200 else None
            if answer is not None and model is not None:
                answer["model"] = model
            out.append(
                {
                    "id": f"batch_req_{i}",
                    "custom_id": request["custom_id"],
                    "response": {
                        "status_code": response.status_code,
                        "request_id": f"req_{i}",
                        "body": answer,
                    },
                    "error": None if response.status_code == 200 else {"message": response.text[:200]},
                }
            )
    kept = out[: len(out) - drop] if drop else out
    Path(output_path).write_text("".join(json.dumps(o) + "\n" for o in kept), encoding="utf-8")
    return len(kept)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-i", "--input", required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--model", default=None, help="the model every line asks for (as run_batch's --model)")
    p.add_argument("--url", required=True, help="server root, e.g. http://127.0.0.1:8000")
    args = p.parse_args(argv)
    n = answer_batch_file(args.input, args.output, args.url, model=args.model)
    print(f"{n} answers written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generate ``example_dump.jsonl``: a small, deterministic evaluation dump.

Three models answer two question-answering tasks (predictions against lists of
gold answers) and one code task (``n`` samples drawn per problem, ``c`` passed),
the way harness dumps look after flattening. Run ``python data/make_example.py``
to rebuild it; the output is the same byte for byte every time.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 20261201
OUT = Path(__file__).with_name("example_dump.jsonl")

CAPITALS = [
    ("France", ["Paris"]), ("Japan", ["Tokyo"]), ("Italy", ["Rome"]), ("Egypt", ["Cairo"]),
    ("Kenya", ["Nairobi"]), ("Peru", ["Lima"]), ("Canada", ["Ottawa"]), ("Norway", ["Oslo"]),
    ("Chile", ["Santiago", "Santiago de Chile"]), ("India", ["New Delhi"]),
    ("Vietnam", ["Hanoi", "Ha Noi"]), ("Ghana", ["Accra"]), ("Spain", ["Madrid"]),
    ("Turkey", ["Ankara"]), ("Brazil", ["Brasília", "Brasilia"]), ("Poland", ["Warsaw"]),
    ("Australia", ["Canberra"]), ("Mexico", ["Mexico City", "Ciudad de México"]),
    ("Iceland", ["Reykjavík", "Reykjavik"]), ("Morocco", ["Rabat"]),
]
SCIENCE = [
    ("What gas do plants absorb?", ["carbon dioxide", "CO2"]),
    ("What is the chemical symbol of gold?", ["Au"]),
    ("Which planet is known as the red planet?", ["Mars", "the planet Mars"]),
    ("What is the largest organ of the human body?", ["the skin", "skin"]),
    ("How many bones are in the adult human body?", ["206", "two hundred and six"]),
    ("What particle has a negative charge?", ["the electron", "electron"]),
    ("What is the boiling point of water at sea level in Celsius?", ["100", "100 degrees"]),
    ("What is the powerhouse of the cell?", ["the mitochondria", "mitochondrion"]),
    ("Which element has atomic number 1?", ["hydrogen"]),
    ("What force keeps planets in orbit?", ["gravity", "gravitation"]),
    ("What is the hardest natural substance?", ["diamond", "a diamond"]),
    ("What is the speed of light in km/s, roughly?", ["300,000", "300000 km/s"]),
    ("Which organ pumps blood?", ["the heart", "heart"]),
    ("What is H2O commonly called?", ["water"]),
    ("Which scientist proposed general relativity?", ["Albert Einstein", "Einstein"]),
]
MODELS = {"tiny-1b": 0.35, "base-7b": 0.6, "large-70b": 0.85}
CODE_PROBLEMS = 30
SAMPLES_PER_PROBLEM = 20


def _surface(answer: str, rng: random.Random) -> str:
    """A correct answer the way models write it: case, articles, punctuation, padding."""
    variants = [
        answer,
        answer.lower(),
        f"The answer is {answer}.",
        f"{answer}.",
        f"the {answer}",
        f"{answer}!",
        f"  {answer} ",
    ]
    return rng.choice(variants)


def _qa_rows(task: str, items, model: str, skill: float, repeat: int, rng: random.Random):
    others = [answer for _, answers in items for answer in answers]
    for index, (question, answers) in enumerate(items):
        roll = rng.random()
        if roll < skill:
            prediction = _surface(rng.choice(answers), rng)
        elif roll < skill + 0.1:
            prediction = f"{rng.choice(answers)} or {rng.choice(others)}"  # partial credit
        elif roll < skill + 0.15:
            prediction = ""  # empty generation
        else:
            prediction = rng.choice([a for a in others if a not in answers])
        yield {
            "model": model,
            "task": task,
            "sample_id": f"{task}-{index:03d}-{repeat}",
            "question_id": f"{task}-{index:03d}",
            "question": question,
            "prediction": prediction,
            "gold": answers,
            "n": None,
            "c": None,
        }


def _code_rows(model: str, skill: float, rng: random.Random):
    for index in range(CODE_PROBLEMS):
        difficulty = rng.random()
        p_pass = max(0.0, min(1.0, skill * 1.2 - difficulty * 0.8))
        passed = sum(rng.random() < p_pass for _ in range(SAMPLES_PER_PROBLEM))
        yield {
            "model": model,
            "task": "code",
            "sample_id": f"code-{index:03d}",
            "question_id": f"code-{index:03d}",
            "question": f"Write function number {index}.",
            "prediction": None,
            "gold": None,
            "n": SAMPLES_PER_PROBLEM,
            "c": passed,
        }


def main() -> None:
    rng = random.Random(SEED)
    capitals = [(f"What is the capital of {country}?", answers) for country, answers in CAPITALS]
    rows = []
    for model, skill in MODELS.items():
        for repeat in range(3):  # three sampled answers per question
            rows.extend(_qa_rows("capitals", capitals, model, skill, repeat, rng))
            rows.extend(_qa_rows("science", SCIENCE, model, skill, repeat, rng))
        rows.extend(_code_rows(model, skill, rng))
    with OUT.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main()

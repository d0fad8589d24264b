#!/usr/bin/env python3
"""Our TPE searcher against Optuna's TPESampler (python3-optuna), same objectives, same run.

Each search runs one trial at a time (Optuna's study.optimize with n_jobs=1): ours through
build/bin/searcher_driver (the master's searcher library over JSON lines), Optuna's in-process,
both with their defaults (10 start-up trials, 24 candidates, univariate). For each objective,
SEEDS seeds at 200 trials; the best value after 50 trials is that run's first 50. Prints the
median regret (best found - known minimum; for the noisy function the noiseless value of the
best observed point) for our TPE, Optuna's TPE and our random search, our regret / Optuna's,
and the cost of one suggestion at 1,000 trials.

  DET_BUILD_DIR=build /usr/bin/python3 bench/tpe_vs_optuna.py [--seeds 20] [--quick]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

try:
    import optuna
except ImportError:
    print("tpe_vs_optuna: python3-optuna is not installed (make setup installs it)", file=sys.stderr)
    sys.exit(1)

optuna.logging.set_verbosity(optuna.logging.WARNING)

BUILD = os.environ.get("DET_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "build"))
DRIVER = os.path.join(BUILD, "bin", "searcher_driver")


# --- objectives: a space (our hyperparameter YAML and Optuna's suggest calls) and a function ---
def branin(p, _rng):
    x1, x2 = p["x1"], p["x2"]
    a, b, c, r, s, t = 1, 5.1 / (4 * math.pi ** 2), 5 / math.pi, 6, 10, 1 / (8 * math.pi)
    return a * (x2 - b * x1 ** 2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


HARTMANN_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                       [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
HARTMANN_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886],
                              [2329, 4135, 8307, 3736, 1004, 9991],
                              [2348, 1451, 3522, 2883, 3047, 6650],
                              [4047, 8828, 8732, 5743, 1091, 381]])
HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(p, _rng):
    x = np.array([p["x%d" % i] for i in range(6)])
    inner = np.sum(HARTMANN_A * (x - HARTMANN_P) ** 2, axis=1)
    return float(-np.sum(HARTMANN_ALPHA * np.exp(-inner)))


ACT = {"relu": 0.0, "tanh": 0.5, "sigmoid": 1.0}


def mixed_clean(p):
    return ((p["a"] - 1) ** 2 + (p["b"] + 2) ** 2 / 4 + (math.log10(p["lr"]) + 2) ** 2 +
            ((p["n"] - 12) / 4) ** 2 + ACT[p["act"]] + 3 * (p["c"] - 0.3) ** 2)


def mixed(p, rng):
    return mixed_clean(p) + rng.normal(0, 0.1)


OBJECTIVES = [
    {
        "name": "branin", "f": branin, "min": 0.397887,
        "yaml": "  x1: {type: double, minval: -5, maxval: 10}\n"
                "  x2: {type: double, minval: 0, maxval: 15}\n",
        "optuna": lambda t: {"x1": t.suggest_float("x1", -5, 10), "x2": t.suggest_float("x2", 0, 15)},
    },
    {
        "name": "hartmann6", "f": hartmann6, "min": -3.32237,
        "yaml": "".join("  x%d: {type: double, minval: 0, maxval: 1}\n" % i for i in range(6)),
        "optuna": lambda t: {"x%d" % i: t.suggest_float("x%d" % i, 0, 1) for i in range(6)},
    },
    {
        "name": "noisy-mixed-6d", "f": mixed, "min": 0.0, "clean": mixed_clean,
        "yaml": "  a: {type: double, minval: -5, maxval: 5}\n"
                "  b: {type: double, minval: -5, maxval: 5}\n"
                "  lr: {type: log, minval: -4, maxval: 0, base: 10}\n"
                "  n: {type: int, minval: 1, maxval: 20}\n"
                "  act: {type: categorical, vals: [relu, tanh, sigmoid]}\n"
                "  c: {type: double, minval: 0, maxval: 1}\n",
        "optuna": lambda t: {"a": t.suggest_float("a", -5, 5), "b": t.suggest_float("b", -5, 5),
                             "lr": t.suggest_float("lr", 1e-4, 1.0, log=True),
                             "n": t.suggest_int("n", 1, 20),
                             "act": t.suggest_categorical("act", ["relu", "tanh", "sigmoid"]),
                             "c": t.suggest_float("c", 0, 1)},
    },
]


def regret(obj, params, value):
    clean = obj.get("clean")
    return (clean(params) if clean else value) - obj["min"]


def run_ours(obj, searcher, seed, trials):
    """Returns (regret after each trial of the best so far, suggestion micros per trial)."""
    config = ("entrypoint: m:T\nreproducibility: {experiment_seed: %d}\nhyperparameters:\n%s"
              "searcher: {name: %s, metric: loss, max_trials: %d, max_concurrent_trials: 1, "
              "max_length: {batches: 1}}\n" % (seed, obj["yaml"], searcher, trials))
    proc = subprocess.Popen([DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps({"config": config}) + "\n")
    proc.stdin.flush()
    rng = np.random.default_rng(seed)
    pending, best, curve, costs = [], math.inf, [], []
    best_regret = math.inf
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        if "error" in msg:
            raise SystemExit("searcher_driver: " + msg["error"])
        if "create" in msg:
            pending.append((msg["create"], msg["hparams"]))
            costs.append(msg["suggest_us"])
        elif "shutdown" in msg:
            break
        elif "idle" in msg:
            if not pending:
                break
            rid, params = pending.pop(0)
            value = obj["f"](params, rng)
            if value < best:
                best, best_regret = value, regret(obj, params, value)
            curve.append(best_regret)
            proc.stdin.write(json.dumps({"completed": rid, "metric": value}) + "\n")
            proc.stdin.flush()
    proc.stdin.close()
    proc.wait()
    return curve, costs


def run_optuna(obj, seed, trials):
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    rng = np.random.default_rng(seed)
    best, best_regret, curve, costs = math.inf, math.inf, [], []
    for _ in range(trials):
        start = time.perf_counter()
        trial = study.ask()
        params = obj["optuna"](trial)
        costs.append((time.perf_counter() - start) * 1e6)
        value = obj["f"](params, rng)
        study.tell(trial, value)
        if value < best:
            best, best_regret = value, regret(obj, params, value)
        curve.append(best_regret)
    return curve, costs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--cost-trials", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="3 seeds, 300 trials for the cost")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.cost_trials = 3, 300
    if not os.path.exists(DRIVER):
        raise SystemExit("tpe_vs_optuna: %s not built (make build)" % DRIVER)
    budgets = [50, args.trials]
    print("tpe_vs_optuna: %d seeds x %d trials per objective; median regret (lower is better)"
          % (args.seeds, args.trials))
    print("%-16s %6s %12s %12s %12s %10s" % ("objective", "trials", "our tpe", "optuna tpe",
                                            "our random", "ours/optuna"))
    for obj in OBJECTIVES:
        started = time.time()
        ours, theirs, random = [], [], []
        for seed in range(1, args.seeds + 1):
            ours.append(run_ours(obj, "tpe", seed, args.trials)[0])
            theirs.append(run_optuna(obj, seed, args.trials)[0])
            random.append(run_ours(obj, "random", seed, args.trials)[0])
        for b in budgets:
            m_ours = statistics.median(c[b - 1] for c in ours)
            m_theirs = statistics.median(c[b - 1] for c in theirs)
            m_random = statistics.median(c[b - 1] for c in random)
            ratio = m_ours / m_theirs if m_theirs > 0 else float("nan")
            print("%-16s %6d %12.5f %12.5f %12.5f %10.2f" % (obj["name"], b, m_ours, m_theirs,
                                                            m_random, ratio), flush=True)
        print("  (%s: %.0f s)" % (obj["name"], time.time() - started), file=sys.stderr)
    obj = OBJECTIVES[1]
    n = args.cost_trials
    _, our_costs = run_ours(obj, "tpe", 1, n)
    _, their_costs = run_optuna(obj, 1, n)
    tail = max(n // 10, 1)
    ours_us = statistics.mean(our_costs[-tail:])
    theirs_us = statistics.mean(their_costs[-tail:])
    print("cost of one suggestion at %d trials (hartmann6, mean of the last %d): ours %.0f us, "
          "optuna %.0f us, optuna/ours %.1fx" % (n, tail, ours_us, theirs_us, theirs_us / ours_us))


if __name__ == "__main__":
    main()

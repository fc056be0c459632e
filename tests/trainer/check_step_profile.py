"""Checks a run directory's step_profile.json (docs/run-directory.md) against its config.json: rank 0,
the steps it covers, one entry per trainable parameter whose elements add up to model_parameters (and,
where config.json lists buckets, as many entries as they hold indices), every ready_s finite with
0 <= ready_s <= backward_s * 1.5 + 0.01, and the last parameter in model order (the classifier) ready no
later than the first: backward runs in reverse order, which holds for the models the tests train.
Usage: /usr/bin/python3 check_step_profile.py DIR --steps S   (S: the steps after the run's first)
Importable: problems(dir, steps) returns what is wrong, in words."""
import argparse
import json
import math
import sys


def problems(d, steps):
    found = []
    try:
        with open(f"{d}/step_profile.json") as f:
            profile = json.load(f)
        with open(f"{d}/config.json") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        return [f"step_profile.json or config.json unreadable: {e}"]
    if profile.get("rank") != 0:
        found.append(f"step_profile.json rank {profile.get('rank')!r}")
    if profile.get("steps") != steps:
        found.append(f"step_profile.json steps {profile.get('steps')!r}, want {steps}")
    backward = profile.get("backward_s")
    if not isinstance(backward, (int, float)) or not math.isfinite(backward) or backward <= 0:
        return found + [f"step_profile.json backward_s {backward!r}"]
    # BatchNorm's running mean and variance: 2 x the channels of every BatchNorm layer (ResNet-18 for
    # CIFAR: 64 + 4x64 + 5x128 + 5x256 + 5x512 = 4800 channels); LeNet has no buffers.
    want_buffers = {"lenet": 0, "resnet18": 9600}.get(config.get("model"))
    buffers = profile.get("buffer_elements")
    if not isinstance(buffers, int) or buffers < 0 or (want_buffers is not None and buffers != want_buffers):
        found.append(f"step_profile.json buffer_elements {buffers!r}, want {want_buffers}")
    parameters = profile.get("parameters")
    if not isinstance(parameters, list) or not parameters:
        return found + [f"step_profile.json parameters {parameters!r}"]
    elements = sum(p.get("elements", 0) for p in parameters)
    if elements != config.get("model_parameters"):
        found.append(f"step_profile.json has {elements} elements, config.json's model_parameters "
                     f"{config.get('model_parameters')}")
    if "buckets" in config:
        indices = sum(len(b) for b in config["buckets"])
        if len(parameters) != indices:
            found.append(f"step_profile.json has {len(parameters)} parameters, config.json's buckets {indices}")
    for p in parameters:
        ready = p.get("ready_s")
        if not isinstance(ready, (int, float)) or not math.isfinite(ready) or not 0 <= ready <= backward * 1.5 + 0.01:
            found.append(f"{p.get('name')}: ready_s {ready!r} outside [0, backward_s {backward} x 1.5 + 0.01]")
        if p.get("dtype") not in ("float32", "float16", "bfloat16"):
            found.append(f"{p.get('name')}: dtype {p.get('dtype')!r}")
    first, last = parameters[0], parameters[-1]
    if not found and last["ready_s"] > first["ready_s"]:
        found.append(f"the last parameter {last.get('name')} was ready at {last['ready_s']} s, after the first "
                     f"{first.get('name')} at {first['ready_s']} s")
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    wrong = problems(args.dir, args.steps)
    if wrong:
        print("step_profile.json check FAILED:\n  " + "\n  ".join(wrong))
        sys.exit(1)
    print(f"{args.dir}/step_profile.json: OK")

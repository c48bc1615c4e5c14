#!/usr/bin/env python3
"""Compares the objects a real Terraform and fleetform left in their states.

Used by tests/terraform_side_by_side.sh. Both inputs are the JSON
representation of `terraform show -json`: for Terraform the saved plan of a
`plan` run right after the apply (its `prior_state` is the refreshed state,
because the Terraform build we use cannot show a state file), for fleetform
`fleetform show -json` of the state. Terraform's output may have every line
prefixed with "o:" (the CloudRail build does that): it is stripped.

Every attribute of every resource instance must be equal, except the values
that are random by design, which are checked for presence and format
instead (see VOLATILE). Outputs are compared the same way.

Usage:
  side_by_side_compare.py compare LABEL TERRAFORM_JSON FLEETFORM_JSON
  side_by_side_compare.py resources JSON      # prints the number of resources
  side_by_side_compare.py tfstate FILE        # the same, of a terraform.tfstate
  side_by_side_compare.py oplog LEFT_LOG RIGHT_LOG  # sim operations, same shape
Exit status 0 when equal, 1 with the differences listed otherwise.
"""

import json
import re
import sys

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def pet_shape(values):
    """random_pet ids: [prefix sep] `length` lowercase words joined by sep."""
    length = int(values.get("length") or 2)
    sep = values.get("separator")
    sep = "-" if sep is None else sep
    word = "[a-z]+"
    body = re.escape(sep).join([word] * length)
    prefix = values.get("prefix")
    if prefix:
        body = re.escape(prefix) + re.escape(sep) + body
    return "^" + body + "$"


# (mode, type, attribute) -> regex, or a function of the instance's values
# giving one. These values differ from run to run by design.
VOLATILE = {
    ("managed", "null_resource", "id"): r"^[0-9]+$",
    ("managed", "sim_object", "id"): "^" + UUID + "$",
    ("data", "sim_object", "id"): "^" + UUID + "$",
    ("managed", "random_pet", "id"): pet_shape,
}


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = [line[2:] if line.startswith("o:") else line for line in text.splitlines()]
    doc = json.loads("\n".join(lines))
    if "prior_state" in doc:  # a plan: the state it was made from
        doc = doc["prior_state"] or {}
    return doc.get("values") or {}


def resources(values):
    """Every resource instance of the root module and its children."""
    out = {}

    def walk(module):
        for r in module.get("resources") or []:
            out[r["address"]] = r
        for child in module.get("child_modules") or []:
            walk(child)

    walk(values.get("root_module") or {})
    return out


def show(v):
    return json.dumps(v, sort_keys=True)


def compare(label, tf_path, ff_path):
    tf, ff = load(tf_path), load(ff_path)
    tf_res, ff_res = resources(tf), resources(ff)
    problems = []
    report = []
    notes = []

    for addr in sorted(set(tf_res) - set(ff_res)):
        if tf_res[addr].get("mode") == "data":
            notes.append(f"{addr}: Terraform keeps data sources in its state, fleetform does not "
                         "(compare their results through outputs)")
        else:
            problems.append(f"{addr}: only in Terraform's state")
    for addr in sorted(set(ff_res) - set(tf_res)):
        problems.append(f"{addr}: only in fleetform's state")

    for addr in sorted(set(tf_res) & set(ff_res)):
        a, b = tf_res[addr], ff_res[addr]
        for key in ("mode", "type", "name", "index", "provider_name", "schema_version"):
            if a.get(key) != b.get(key):
                problems.append(f"{addr}: {key} {show(a.get(key))} (terraform) != {show(b.get(key))} (fleetform)")
        av, bv = a.get("values") or {}, b.get("values") or {}
        equal, shaped = 0, 0
        for attr in sorted(set(av) | set(bv)):
            if attr not in av or attr not in bv:
                side = "fleetform" if attr not in av else "Terraform"
                problems.append(f"{addr}.{attr}: only in {side}'s object")
                continue
            rule = VOLATILE.get((a.get("mode"), a.get("type"), attr))
            if rule is not None:
                ok = True
                for side, vals in (("terraform", av), ("fleetform", bv)):
                    pattern = rule(vals) if callable(rule) else rule
                    v = vals[attr]
                    if not isinstance(v, str) or not re.match(pattern, v):
                        ok = False
                        problems.append(f"{addr}.{attr}: {side}'s value {show(v)} does not match {pattern}")
                shaped += ok
            elif av[attr] != bv[attr]:
                problems.append(f"{addr}.{attr}: {show(av[attr])} (terraform) != {show(bv[attr])} (fleetform)")
            else:
                equal += 1
        report.append(f"  {addr}: equal ({equal} attribute{'' if equal == 1 else 's'}"
                      + (f", {shaped} random by design: well-formed" if shaped else "") + ")")

    # Within each state, a data source reading a managed object reports it.
    for side, res in (("terraform", tf_res), ("fleetform", ff_res)):
        managed_ids = {r["values"].get("id") for r in res.values()
                       if r.get("mode") == "managed" and r.get("type") == "sim_object"}
        for addr, r in res.items():
            if r.get("mode") == "data" and r.get("type") == "sim_object":
                if r["values"].get("id") not in managed_ids:
                    problems.append(f"{addr}: {side}'s data source id {show(r['values'].get('id'))} "
                                    f"is none of the sim_object ids {sorted(map(str, managed_ids))}")

    tf_out, ff_out = tf.get("outputs") or {}, ff.get("outputs") or {}
    for name in sorted(set(tf_out) | set(ff_out)):
        if name not in tf_out or name not in ff_out:
            side = "fleetform" if name not in tf_out else "Terraform"
            problems.append(f"output {name}: only in {side}'s state")
        elif tf_out[name].get("value") != ff_out[name].get("value") or \
                bool(tf_out[name].get("sensitive")) != bool(ff_out[name].get("sensitive")):
            problems.append(f"output {name}: {show(tf_out[name])} (terraform) != {show(ff_out[name])} (fleetform)")
    if tf_out:
        report.append(f"  outputs: {len(tf_out)} compared ({', '.join(sorted(tf_out))})")

    if not tf_res:
        problems.append("Terraform's state has no resources")
    both = len(set(tf_res) & set(ff_res))
    print(f"{label}: {both} resource instances compared")
    for line in report:
        print(line)
    for n in notes:
        print(f"  NOTE {n}")
    for p in problems:
        print(f"  MISMATCH {p}")
    return 1 if problems else 0


def oplog(left, right):
    """Both sim operation logs: the same operations on the same kinds of
    objects, in the same order, and every object created once, deleted once."""

    def read(path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    problems = []
    logs = {}
    for side, path in (("terraform", left), ("fleetform", right)):
        ops = read(path)
        logs[side] = [(o.get("op"), o.get("type"), o.get("name")) for o in ops]
        per_id = {}
        for o in ops:
            per_id.setdefault(o.get("id"), []).append(o.get("op"))
        for oid, seq in per_id.items():
            if seq != ["create", "delete"]:
                problems.append(f"{side}: object {oid} has operations {seq}, not one create and one delete")
        op_ids = [o.get("operation_id") for o in ops]
        if len(set(op_ids)) != len(op_ids):
            problems.append(f"{side}: duplicate operation ids")
    if logs["terraform"] != logs["fleetform"]:
        problems.append(f"operations differ: {logs['terraform']} (terraform) != {logs['fleetform']} (fleetform)")
    print(f"sim operations: {len(logs['terraform'])} (terraform) and {len(logs['fleetform'])} (fleetform), "
          "every object created once and deleted once" if not problems else "sim operations differ")
    for p in problems:
        print(f"  MISMATCH {p}")
    return 1 if problems else 0


def configuration(tf_path, ff_path):
    """The `configuration` sections of two `show -json PLANFILE` documents,
    Terraform's and fleetform's: equal but for what only one of them
    writes (Terraform 0.15's raw_data source positions; the full_name and
    module_address that Terraform 1.x writes and fleetform does too), with
    fleetform's references in 0.15's form when Terraform is 0.15."""

    def document(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = [line[2:] if line.startswith("o:") else line for line in text.splitlines()]
        return json.loads("\n".join(lines))

    def strip(v):
        if isinstance(v, dict):
            return {
                k: strip(x)
                for k, x in v.items()
                if k not in ("raw_data", "full_name", "module_address")
            }
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    from tf_references import references_as_015

    # fleetform lists references as Terraform 1.x does; Terraform 0.15
    # (the side-by-side's Terraform before 1.11) lists only the objects
    # referred to.
    tf_doc, ff_doc = document(tf_path), document(ff_path)
    ff_section = ff_doc.get("configuration")
    if str(tf_doc.get("terraform_version", "")).startswith("0."):
        ff_section = references_as_015(ff_section)
    tf, ff = strip(tf_doc.get("configuration")), strip(ff_section)
    if tf is None or ff is None:
        print(f"  MISMATCH configuration missing: terraform {tf is not None}, fleetform {ff is not None}")
        return 1
    if tf == ff:
        print("configuration sections equal")
        return 0
    a = json.dumps(tf, indent=1, sort_keys=True).splitlines()
    b = json.dumps(ff, indent=1, sort_keys=True).splitlines()
    import difflib

    for line in list(difflib.unified_diff(a, b, "terraform", "fleetform", lineterm=""))[:60]:
        print(f"  MISMATCH {line}")
    return 1


def main(argv):
    if len(argv) == 4 and argv[1] == "configuration":
        return configuration(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "compare":
        return compare(argv[2], argv[3], argv[4])
    if len(argv) == 3 and argv[1] == "resources":
        print(len(resources(load(argv[2]))))
        return 0
    if len(argv) == 3 and argv[1] == "tfstate":
        with open(argv[2], encoding="utf-8") as f:
            print(len(json.load(f).get("resources") or []))
        return 0
    if len(argv) == 4 and argv[1] == "oplog":
        return oplog(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""What real consumers of the plan JSON make of fleetform's and Terraform's.

Used by tests/plan_json_consumers.sh, run with the python of the consumers'
venv (checkov and terraform-compliance importable, their commands on PATH).

Usage:
  plan_json_consumers.py WORKDIR TERRAFORM_JSON|- FLEETFORM_JSON CONSUMER...

CONSUMER is checkov or terraform-compliance (those installed). WORKDIR
receives the policies and features (written here) and the consumers' output.
Each consumer reads each plan JSON twice: through its command line, as a
user runs it (checkov's custom policies, terraform-compliance's features:
the findings), and through its plan parser (what it took out of the JSON:
resources, providers, references between resources). Everything it reports
must be the same for both JSONs, and must parse without errors. Without
Terraform's JSON ("-"), fleetform's results are checked against EXPECTED,
the findings that do not depend on the Terraform version; with it, Terraform's
results are checked against EXPECTED too (a failure there means the
expectation is wrong, not fleetform).

Exit status 0 when all is the same, 1 with MISMATCH lines otherwise.
"""

import difflib
import json
import os
import re
import subprocess
import sys

# --- the policies and features ------------------------------------------------

# checkov: YAML policies on attributes and on connections (edges that checkov
# draws from `configuration...expressions...references`, in modules found
# through `module_calls`), a Python check on a provider's settings (from
# `provider_config`).
CHECKOV_POLICIES = {
    "sim_tagged.yaml": """\
metadata:
  id: CKV2_FF_1
  name: sim objects carry the env tag of the test environment
  category: GENERAL_SECURITY
definition:
  cond_type: attribute
  resource_types: [sim_object]
  attribute: tags.env
  operator: equals
  value: test
""",
    "file_private.yaml": """\
metadata:
  id: CKV2_FF_2
  name: local files are readable by their owner only
  category: GENERAL_SECURITY
definition:
  cond_type: attribute
  resource_types: [local_file]
  attribute: file_permission
  operator: equals
  value: "0600"
""",
    "file_from_object.yaml": """\
metadata:
  id: CKV2_FF_3
  name: local files are written from a sim object or a random integer
  category: GENERAL_SECURITY
definition:
  and:
    - cond_type: filter
      attribute: resource_type
      value: [local_file]
      operator: within
    - cond_type: connection
      resource_types: [local_file]
      connected_resource_types: [sim_object, random_integer]
      operator: exists
""",
    "marker_to_pet.yaml": """\
metadata:
  id: CKV2_FF_4
  name: null resources are connected to a random pet
  category: GENERAL_SECURITY
definition:
  and:
    - cond_type: filter
      attribute: resource_type
      value: [null_resource]
      operator: within
    - cond_type: connection
      resource_types: [null_resource]
      connected_resource_types: [random_pet]
      operator: exists
""",
    # checkov imports Python checks only from a directory with __init__.py.
    "__init__.py": "",
    "SimProviderStore.py": """\
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.provider.base_check import BaseProviderCheck


class SimProviderStore(BaseProviderCheck):
    def __init__(self):
        super().__init__(
            name="the sim provider keeps its store in the working directory",
            id="CKV_FF_5",
            categories=[CheckCategories.GENERAL_SECURITY],
            supported_provider=["sim"],
        )

    def scan_provider_conf(self, conf):
        if conf.get("store_dir") == ["sim-store"]:
            return CheckResult.PASSED
        return CheckResult.FAILED


check = SimProviderStore()
""",
}

# terraform-compliance: scenarios on attributes, on a provider's settings
# (`provider_config`), and on the resources it mounts into each other
# through `configuration` references (a module's variables followed to the
# module call's expressions). The outputs it reads from `configuration` are
# compared through its parser below.
FEATURE = r"""Feature: a plan's resources, providers, outputs and references

  Scenario: sim objects are tagged for the environment
    Given I have sim_object defined
    Then it must contain tags
    And it must contain env
    And its value must be test

  Scenario: local files are private
    Given I have local_file defined
    Then it must contain file_permission
    And its value must be 0600

  Scenario: the sim provider keeps its store in the working directory
    Given I have sim provider configured
    Then it must contain expressions
    And it must contain store_dir
    And its value must be sim-store

  Scenario: the markers are tied to the blue pet only
    Given I have null_resource defined
    When its address has "^null_resource\.marker" regex
    Then it must contain random_pet
    And it must contain prefix
    And its value must be blue

  Scenario: the first module's triggers come from the app, not from a pet
    Given I have null_resource defined
    When its address has "^module\.child\." regex
    Then it must not contain random_pet
    And it must contain sim_object

  Scenario: the first module's file is written from that module's integer
    Given I have local_file defined
    When its address has "^module\.child\." regex
    Then it must contain random_integer
    And it must contain max
    And its value must be 20
"""

# What the consumers find on Terraform's JSON where that does not depend on
# the Terraform version. Left out: the links to the pets. A reference to
# `random_pet.pet["blue"].id` is listed as `random_pet.pet["blue"]` by 0.15,
# and as that and `random_pet.pet` (and the `.id` form) by 1.x, which makes
# checkov connect the markers to a pet (0.15's form it does not resolve) and
# terraform-compliance link them to both pets.
RESOURCES = [
    'local_file.out',
    'module.child.local_file.child',
    'module.child.null_resource.each["x"]',
    'module.child.null_resource.each["y"]',
    'module.child.random_integer.n',
    'module.second.local_file.child',
    'module.second.null_resource.each["z"]',
    'module.second.random_integer.n',
    'null_resource.marker[0]',
    'null_resource.marker[1]',
    'random_pet.pet["blue"]',
    'random_pet.pet["green"]',
    'sim_object.app',
]
EXPECTED = {
    "checkov: resources": RESOURCES,
    "terraform-compliance: resources": RESOURCES,
    "checkov: findings of CKV2_FF_1, CKV2_FF_2, CKV2_FF_3, CKV_FF_5": [
        "CKV2_FF_1 sim_object.app PASSED",
        "CKV2_FF_2 local_file.out FAILED",
        "CKV2_FF_2 module.child.local_file.child PASSED",
        "CKV2_FF_2 module.second.local_file.child PASSED",
        "CKV2_FF_3 local_file.out PASSED",
        "CKV2_FF_3 module.child.local_file.child PASSED",
        "CKV2_FF_3 module.second.local_file.child PASSED",
        "CKV_FF_5 sim.default PASSED",
    ],
    "terraform-compliance: scenarios (version-independent)": {
        "sim objects are tagged for the environment": "passed",
        "local files are private": "failed",
        "the sim provider keeps its store in the working directory": "passed",
        "the first module's triggers come from the app, not from a pet": "passed",
        # Not "the first module's file is written from that module's
        # integer": terraform-compliance passes it on 0.15's references
        # and fails it on Terraform 1.11's (and fleetform's), which also
        # name the module call of a module output.
    },
}

# --- running them -------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Keys that say where in the JSON file a block is: they differ with the
# layout of the file, not with its content.
POSITION_KEYS = {"__file__", "__startline__", "__endline__", "start_line", "end_line",
                 "__start_line__", "__end_line__"}


class ConsumerError(Exception):
    pass


def run(cmd, work, log):
    env = dict(os.environ, HOME=work, TMPDIR=work, NO_COLOR="1", PYTHONWARNINGS="ignore",
               LOG_LEVEL="WARNING")
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    with open(log + ".out", "w", encoding="utf-8") as f:
        f.write(p.stdout)
    with open(log + ".err", "w", encoding="utf-8") as f:
        f.write(p.stderr)
    return p


def tail(text, n=15):
    return "\n".join("    | " + line for line in text.strip().splitlines()[-n:])


def strip_positions(v):
    if isinstance(v, dict):
        return {k: strip_positions(x) for k, x in v.items() if k not in POSITION_KEYS}
    if isinstance(v, list):
        return [strip_positions(x) for x in v]
    return v


def checkov_view(work, side, plan):
    """checkov: its command (findings) and its plan parser (definitions)."""
    view = {}
    checks = os.path.join(work, "checkov")
    cmd = ["checkov", "-f", plan, "--framework", "terraform_plan", "--external-checks-dir", checks,
           "-o", "json", "--compact", "--skip-download"]
    p = run(cmd, work, os.path.join(work, f"checkov-{side}"))
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise ConsumerError(f"checkov printed no JSON report (exit {p.returncode}):\n{tail(p.stdout + p.stderr)}")
    if isinstance(doc, list):  # one report per framework when several ran
        doc = next((d for d in doc if d.get("check_type") == "terraform_plan"), {})
    if "Traceback" in p.stderr:
        raise ConsumerError(f"checkov raised an exception:\n{tail(p.stderr)}")
    summary = doc.get("summary") or {}
    if summary.get("parsing_errors") or "results" not in doc:
        raise ConsumerError(f"checkov could not parse the plan: {json.dumps(summary)}\n{tail(p.stderr)}")
    results = doc["results"]
    findings = sorted(
        f"{c['check_id']} {c['resource']} {c['check_result']['result']}"
        for kind in ("passed_checks", "failed_checks", "skipped_checks")
        for c in results.get(kind, [])
    )
    view["checkov: number of resources"] = summary.get("resource_count")
    view["checkov: findings"] = findings
    view["checkov: findings of CKV2_FF_1, CKV2_FF_2, CKV2_FF_3, CKV_FF_5"] = [
        f for f in findings if f.split()[0] in ("CKV2_FF_1", "CKV2_FF_2", "CKV2_FF_3", "CKV_FF_5")
    ]

    # The parser behind it: every resource and provider as checkov's checks
    # see them, with the references it took from `configuration`.
    from checkov.terraform.plan_parser import parse_tf_plan

    errors = {}
    definitions, _ = parse_tf_plan(plan, errors)
    if errors or definitions is None:
        raise ConsumerError(f"checkov's plan parser failed: {errors}")
    addresses = []
    for kind in ("resource", "data", "provider"):
        for block in definitions.get(kind) or []:
            for rtype, by_name in block.items():
                if kind == "provider":
                    conf = strip_positions(by_name)
                    view[f"checkov: provider {conf.get('__address__')}"] = conf
                    continue
                for name, conf in by_name.items():
                    address = conf.get("__address__", f"{rtype}.{name}")
                    addresses.append(address)
                    view[f"checkov: {kind} {address} as parsed"] = strip_positions(conf)
    view["checkov: resources"] = sorted(addresses)
    return view


def parse_compliance_output(text):
    """Scenario name -> {"result": passed|failed|skipped, "failures": [...]}."""
    scenarios, current = {}, None
    for line in ANSI.sub("", text).splitlines():
        s = line.strip()
        m = re.match(r"Scenario(?: Outline)?: (.*)$", s)
        if m:
            current = {"result": "passed", "failures": []}
            scenarios[m.group(1).strip()] = current
            continue
        if current is None:
            continue
        m = re.match(r"Failure: (.*)$", s)
        if m:
            current["result"] = "failed"
            if m.group(1).strip():
                current["failures"].append(m.group(1).strip())
        elif "SKIPPING" in s and current["result"] == "passed":
            current["result"] = "skipped"
    for sc in scenarios.values():
        sc["failures"].sort()
    return scenarios


def compliance_view(work, side, plan):
    """terraform-compliance: its command (features) and its plan parser."""
    view = {}
    cmd = ["terraform-compliance", "-f", os.path.join(work, "features"), "-p", plan]
    p = run(cmd, work, os.path.join(work, f"terraform-compliance-{side}"))
    out = ANSI.sub("", p.stdout + p.stderr)
    if "Traceback" in out or "FATAL" in out or "ERROR:" in out or not re.search(r"^\d+ scenarios \(", out, re.M):
        raise ConsumerError(f"terraform-compliance did not run the features (exit {p.returncode}):\n{tail(out)}")
    scenarios = parse_compliance_output(p.stdout)
    if len(scenarios) != FEATURE.count("Scenario:"):
        raise ConsumerError(f"terraform-compliance reported {len(scenarios)} scenarios:\n{tail(out)}")
    for name, sc in scenarios.items():
        view[f"terraform-compliance: scenario '{name}'"] = sc
    view["terraform-compliance: scenarios (version-independent)"] = {
        name: sc["result"] for name, sc in scenarios.items()
        if name in EXPECTED["terraform-compliance: scenarios (version-independent)"]
    }

    # The parser behind it: the resources, what it mounted into each (the
    # resources it linked through `configuration` references), and what it
    # read from `configuration`.
    from terraform_compliance.extensions.terraform import TerraformParser

    parser = TerraformParser(plan, parse_it=False)
    parser.parse()
    view["terraform-compliance: resources"] = sorted(parser.resources)
    for address, r in sorted(parser.resources.items()):
        values = r.get("values") or {}
        mounted = {
            k: len(v) for k, v in values.items()
            if isinstance(v, list) and v and isinstance(v[0], dict) and v[0].get("terraform-compliance.mounted")
        }
        view[f"terraform-compliance: links of {address}"] = {
            "mounted types": mounted,
            "mounted from": sorted(r.get("terraform-compliance.mounted_resources.addresses_list") or []),
        }
    conf = parser.configuration
    view["terraform-compliance: configuration resources"] = sorted(conf["resources"])
    view["terraform-compliance: provider configurations"] = {
        key: {k: v for k, v in pc.items() if k in ("name", "alias", "expressions")}
        for key, pc in (conf.get("providers") or {}).items()
    }
    view["terraform-compliance: variables"] = conf.get("variables")
    view["terraform-compliance: outputs"] = conf.get("outputs")
    return view


VIEWS = {"checkov": checkov_view, "terraform-compliance": compliance_view}

# fleetform lists references as Terraform 1.x does: `random_pet.pet["blue"].id`
# as that, `random_pet.pet["blue"]` and `random_pet.pet`; `module.child.ids`
# as that and `module.child`. Terraform 0.15 lists only the object referred
# to: `random_pet.pet["blue"]`, `module.child.ids`. The consumers read the
# two forms differently (terraform-compliance links a marker to both pets
# with 1.x's). To compare with 0.15, fleetform's plan is given to the
# consumers with its references written in 0.15's form (Terraform's own
# plan is already in it); against a 1.x Terraform (Terraform 1.11, the
# default) both plans are compared as they are.
from tf_references import references_as_015  # noqa: E402  (beside this script)


def show(v):
    return json.dumps(v, indent=1, sort_keys=True, default=str)


def compare(label_a, a, label_b, b):
    """Every key whose value differs between the views a and b: the key and
    a diff of the two values."""
    problems = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, "<missing>"), b.get(key, "<missing>")
        if va == vb:
            continue
        diff = list(difflib.unified_diff(show(va).splitlines(), show(vb).splitlines(),
                                         label_a, label_b, lineterm="", n=2))
        problems.append(f"{key}:\n" + "\n".join(f"    {line}" for line in diff[2:]))
    return problems


def configuration_diff(tf_plan, ff_plan):
    """A diff of the two plans' `configuration` sections, less what differs
    by design (raw_data, full_name, module_address)."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()
                    if k not in ("raw_data", "full_name", "module_address")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    def section(path):
        with open(path, encoding="utf-8") as f:
            return show(strip(json.load(f).get("configuration"))).splitlines()

    return list(difflib.unified_diff(section(tf_plan), section(ff_plan), "terraform", "fleetform",
                                     lineterm="", n=2))


def main(argv):
    if len(argv) < 5:
        print(__doc__)
        return 2
    work, tf_plan, ff_plan, consumers = argv[1], argv[2], argv[3], argv[4:]
    os.makedirs(os.path.join(work, "checkov"), exist_ok=True)
    os.makedirs(os.path.join(work, "features"), exist_ok=True)
    for name, text in CHECKOV_POLICIES.items():
        with open(os.path.join(work, "checkov", name), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(work, "features", "plan.feature"), "w", encoding="utf-8") as f:
        f.write(FEATURE)

    status = 0
    if os.environ.get("TERRAFORM_VERSION", "").startswith("Terraform v0."):
        with open(ff_plan, encoding="utf-8") as f:
            doc = json.load(f)
        doc["configuration"] = references_as_015(doc.get("configuration"))
        ff_plan = os.path.join(work, "ff-plan.references-as-0.15.json")
        with open(ff_plan, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        print(f"fleetform's plan: references written as {os.environ['TERRAFORM_VERSION']} writes them")
    for consumer in consumers:
        sides = [("fleetform", ff_plan)] + ([("terraform", tf_plan)] if tf_plan != "-" else [])
        views = {}
        for side, plan in sides:
            try:
                views[side] = VIEWS[consumer](work, side, plan)
            except ConsumerError as e:
                print(f"  MISMATCH {consumer} on {side}'s plan JSON: {e}")
                status = 1
        if len(views) != len(sides):
            continue
        expected = {k: v for k, v in EXPECTED.items() if k.startswith(consumer + ":")}
        problems = []
        if "terraform" in views:
            wrong = compare("expected", expected, "terraform", {k: views["terraform"][k] for k in expected})
            for p in wrong:
                print(f"  MISMATCH (the expectation, not fleetform) {p}")
            status |= 1 if wrong else 0
            problems = compare("terraform", views["terraform"], "fleetform", views["fleetform"])
            what = "the same as on Terraform's"
        else:
            problems = compare("expected", expected, "fleetform", {k: views["fleetform"].get(k) for k in expected})
            what = "as expected"
        for p in problems:
            print(f"  MISMATCH {p}")
        n = len(views["fleetform"]) if "terraform" in views else len(expected)
        findings = sum(len(v) for k, v in views["fleetform"].items() if k == "checkov: findings") or \
            sum(1 for k in views["fleetform"] if k.startswith("terraform-compliance: scenario '"))
        kind = "checks" if consumer == "checkov" else "scenarios"
        if problems:
            status = 1
            print(f"{consumer}: {len(problems)} of {n} items differ ({findings} {kind} reported)")
        else:
            items = ("resources, parsed resources, providers, links" if "terraform" in views
                     else "resources and the version-independent findings")
            print(f"{consumer}: parses fleetform's plan JSON without errors; all {n} items "
                  f"({items}; {findings} {kind} reported) {what}")
    if status and tf_plan != "-":
        diff = configuration_diff(tf_plan, ff_plan)
        if diff:
            print("evidence: the `configuration` sections, terraform vs fleetform "
                  "(less raw_data, full_name, module_address):")
            for line in diff[2:80]:
                print(f"  {line}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))

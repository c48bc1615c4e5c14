"""References in the `configuration` of `show -json`, in Terraform 0.15's
form.

fleetform lists a reference as Terraform 1.x does: the traversal as
written, shorter and shorter down to the object it refers to, then the
resource of a resource instance or the call of a module output
(`random_pet.pet["blue"].id`, `random_pet.pet["blue"]`, `random_pet.pet`).
Terraform 0.15 lists only the object (`random_pet.pet["blue"]`). The tests
that compare fleetform with Terraform 0.15 rewrite fleetform's lists into
0.15's form with `references_as_015`; Terraform 1.x's own lists would give
the same result.
"""

import re

def subject_of(ref):
    """The object a reference as Terraform 1.x lists it refers to, as 0.15
    names it."""
    steps = re.findall(r'\.[A-Za-z0-9_-]+|\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\]', "." + ref)
    names = [st[1:] for st in steps]
    if not names:
        return ref
    head = names[0]
    if head in ("var", "local", "path", "count", "each", "terraform") or head == "self":
        return "".join(steps[:2])[1:]
    if head == "module":
        n = 2
        if len(steps) > n and steps[n].startswith("["):
            n += 1
        if len(steps) > n:
            n += 1  # the output
        return "".join(steps[:n])[1:]
    n = 3 if head == "data" else 2
    if len(steps) > n and steps[n].startswith("["):
        n += 1
    return "".join(steps[:n])[1:]


def as_015(refs):
    subjects = []
    for r in refs:
        sub = subject_of(r)
        if sub not in subjects:
            subjects.append(sub)
    # 1.x adds the resource after its instance and the call after its
    # output: 0.15 lists only the instance, the output.
    return [s for s in subjects
            if not any(o != s and (o.startswith(s + "[") or o.startswith(s + ".")) for o in subjects)]


def references_as_015(doc):
    if isinstance(doc, dict):
        return {k: (as_015(v) if k == "references" and isinstance(v, list) else references_as_015(v))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [references_as_015(v) for v in doc]
    return doc

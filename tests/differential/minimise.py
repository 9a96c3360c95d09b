"""Delta debugging of a difference: the smallest subsequence of the stream that still shows it.

The stream up to the failing command is cut into atoms (one command, or one wake step) that
keep their connection and, in pipelined mode, their batch. A candidate is run from empty
keyspaces on fresh connections, and reproduces when the same request differs again, with
replies of the same types, in the candidate's last unit. Zeller's ddmin removes chunks of
atoms while that holds; the failing atom itself always stays. Bounded by a time budget and a
number of runs: a sequence that is not minimal yet is still printed, marked as such.
"""

import time

from generator import Unit


def atoms_until(trace, diff):
    """(atoms, target): the stream's commands before the failing one, and the failing one.
    An atom is (unit index, command index). A difference in pub/sub messages is pinned to the
    last command of its unit; one in a wake step to the step."""
    atoms = [(u, c) for u in range(diff.unit_index) for c in range(len(trace[u].cmds))]
    unit = trace[diff.unit_index]
    target = len(unit.cmds) - 1
    for c, cmd in enumerate(unit.cmds):
        if cmd is diff.cmd:
            target = c
    atoms += [(diff.unit_index, c) for c in range(target)]
    return atoms, (diff.unit_index, target)


def shape(diff):
    """What a reproduction must keep of a difference: each side's reply types, and the first
    word of an error (so that a smaller sequence that differs in another way does not count)."""
    def one(frames):
        return tuple(f[:1] + (f.split(b" ", 1)[0] if f.startswith(b"-") else b"") for f in frames)
    return one(diff.ref), one(diff.proxy)


def build(trace, atoms):
    """Units for a list of atoms: each atom's command on its connection, batched as it was."""
    units = []
    previous = None
    for u, c in atoms:
        cmd = trace[u].cmds[c]
        if previous == u:
            units[-1].cmds.append(cmd)
        else:
            units.append(Unit(trace[u].conn, [cmd]))
        previous = u
    return units


class Minimiser:
    def __init__(self, runner, trace, diff, protocol, budget_s, max_runs=400):
        self.runner = runner
        self.protocol = protocol        # every candidate runs in the stream's protocol
        self.trace = trace
        self.diff = diff
        self.deadline = time.monotonic() + budget_s
        self.max_runs = max_runs
        self.runs = 0
        self.atoms, self.target = atoms_until(trace, diff)

    def out_of_budget(self):
        return self.runs >= self.max_runs or time.monotonic() > self.deadline

    def reproduces(self, atoms):
        """Whether these atoms followed by the target show the same difference at the end."""
        if self.out_of_budget():
            return False
        self.runs += 1
        units = build(self.trace, list(atoms) + [self.target])
        try:
            self.runner.open(self.protocol)
            got = self.runner.run(units)
        except Exception:           # a crashed proxy, say: not a clean reproduction
            self.runner.recover()
            return False
        return (got is not None and got.unit_index == len(units) - 1
                and got.what == self.diff.what and shape(got) == shape(self.diff))

    def run(self):
        """(minimal atoms incl. the target, whether the search finished within budget)."""
        if not self.reproduces(self.atoms):
            return self.atoms + [self.target], False
        current = self.atoms
        # Most differences need only the last few commands: try short suffixes first.
        size = 0
        while size < len(current):
            if self.reproduces(current[len(current) - size:]):
                current = current[len(current) - size:]
                break
            size = size * 2 if size else 1
        current = self._ddmin(current)
        return current + [self.target], not self.out_of_budget()

    def _ddmin(self, atoms):
        n = 2
        while len(atoms) >= 1 and not self.out_of_budget():
            if len(atoms) == 1:
                return [] if self.reproduces([]) else atoms
            chunk = max(1, len(atoms) // n)
            subsets = [atoms[i:i + chunk] for i in range(0, len(atoms), chunk)]
            reduced = False
            for i in range(len(subsets)):
                complement = [a for j, s in enumerate(subsets) if j != i for a in s]
                if self.reproduces(complement):
                    atoms = complement
                    n = max(n - 1, 2)
                    reduced = True
                    break
            if not reduced:
                if n >= len(atoms):
                    break
                n = min(n * 2, len(atoms))
        return atoms

"""Why gflow's high-order method is Rodas5P and not Rodas4 (chosen by measurement).

Both are Rodas methods with the exact Jacobian, run by the same code (gflow.flow.RodasGradientFlow: stage systems
solved by Richardson iteration with exact Hessian-vector products, preconditioned by the Gauss–Newton Woodbury
solve); only the tableau differs. Rodas4 has 6 stages (order 4, embedded order 3), Rodas5P 8 (order 5, embedded 4).
On R1 this script times both, and ROS34PW2, at each rtol, judged against ROS34PW2 at --ref-rtol (the other method
for both Rodas variants), in one process.

    python bench/rodas_choice.py                 # R1, rtol 1e-8 1e-10 1e-12, reference at 1e-13 (≈ 3 min, 2 cores)
    python bench/rodas_choice.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

import _orders as O
import _problems as P
import gflow
from _accuracy import add_accuracy, Reference
from gflow.flow import RODAS5P, RodasGradientFlow, RodasTableau

# Rodas4 (E. Hairer & G. Wanner, Solving Ordinary Differential Equations II, 2nd ed., Springer 1996, Sec. VI.4), in
# the transformed form of OrdinaryDiffEq.jl's RODAS4A/C/c/H constants; dense output of order 3 (two rows, the third
# zero). Stiffly accurate: b is the last row of A with a 1 appended; the error estimate is the last stage.
_A5 = (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.687886036105895)
RODAS4 = RodasTableau(
    gamma=0.25,
    A=((0, 0, 0, 0, 0, 0),
       (1.544, 0, 0, 0, 0, 0),
       (0.9466785280815826, 0.2557011698983284, 0, 0, 0, 0),
       (3.314825187068521, 2.896124015972201, 0.9986419139977817, 0, 0, 0),
       _A5 + (0, 0),
       _A5 + (1, 0)),
    C=((0, 0, 0, 0, 0, 0),
       (-5.6688, 0, 0, 0, 0, 0),
       (-2.430093356833875, -0.2063599157091915, 0, 0, 0, 0),
       (-0.1073529058151375, -9.594562251023355, -20.47028614809616, 0, 0, 0),
       (7.496443313967647, -10.24680431464352, -33.99990352819905, 11.7089089320616, 0, 0),
       (8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054, 0)),
    c=(0, 0.386, 0.21, 0.63, 1, 1),
    b=_A5 + (1, 1),
    b_tilde=(0, 0, 0, 0, 0, 1),
    H=((10.12623508344586, -7.487995877610167, -34.80091861555747, -7.992771707568823, 1.025137723295662, 0),
       (-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386, -6.594389125716872, 0),
       (0, 0, 0, 0, 0, 0)),
    order=4, embedded_order=3, name="Rodas4")

METHODS = {"Rodas4": lambda: RodasGradientFlow(rodas=RODAS4), "Rodas5P": lambda: RodasGradientFlow(rodas=RODAS5P),
           "ROS34PW2": lambda: "rosenbrock"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-8, 1e-10, 1e-12], help="rtols to time")
    ap.add_argument("--ref-rtol", type=float, default=1e-13, help="rtol of the ROS34PW2 reference")
    ap.add_argument("--json", metavar="PATH", help="write the rows to this JSON file")
    args = ap.parse_args(argv)
    p = P.r1(False, None)

    def solve(solver, rtol):
        return O._solve(p.loss, p.model0, p.t1, rtol, p.atol_factor * rtol, solver)

    tr, wall = solve("rosenbrock", args.ref_rtol)
    ref = Reference(p.model0, tr)
    print(f"R1 ({p.description}); reference ROS34PW2 at rtol {args.ref_rtol:g}: {tr.stats['steps']} steps, "
          f"{wall:.1f} s", flush=True)
    rows = []
    for name, make in METHODS.items():
        solve(make(), args.rtols[0])  # compile
        for rtol in args.rtols:
            tr, wall = solve(make(), rtol)
            if wall < 10:  # best of two warm calls
                wall = min(wall, solve(make(), rtol)[1])
            st = tr.stats
            row = add_accuracy({"method": name, "rtol": rtol, "status": tr.status, "wall_s": wall,
                                "steps": st["steps"], "hessian_vector_products": st.get("hessian_vector_products", 0),
                                "ms_per_step": 1e3 * wall / max(st["steps"], 1),
                                "theta": np.asarray(gflow.flatten(tr.final)[0])}, ref)
            rows.append(row)
            print(f"  {name:8s} rtol {rtol:<6g} {wall:7.2f} s {st['steps']:7d} steps {row['hessian_vector_products']:7d} "
                  f"HVPs {row['ms_per_step']:.2f} ms/step, h err {row['h_rel_err']:.1e}", flush=True)
    by = {(r["method"], r["rtol"]): r["wall_s"] for r in rows}
    for rtol in args.rtols:
        print(f"  rtol {rtol:g}: wall Rodas4 / Rodas5P = {by[('Rodas4', rtol)] / by[('Rodas5P', rtol)]:.2f} "
              f"(> 1: Rodas5P faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"problem": "R1", "ref": f"ROS34PW2 at rtol {args.ref_rtol:g}", "cpu_count": os.cpu_count(),
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

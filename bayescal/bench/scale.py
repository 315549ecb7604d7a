"""``bayescal bench scale``: out-of-core summaries + score-bin EM + NC-ECE on chunked Parquet.

Protocol
--------
1. Generate ``--items`` items of the toy study (``shifted`` condition, K annotators with
   the toy flip rates, each answer missing with probability ``--missing``) as Parquet
   files of ``--file-rows`` rows with row groups of ``--row-group`` rows, in ``--dir``
   (default: a temporary folder next to the JSON). Columns: ``score`` float32 (the stored
   value *is* the score: it is read back exactly as float64, so [0, 1] is kept and the
   summary sees exactly what is on disk), ``a1 .. aK`` int8 with nulls for missing answers
   (about 1.1 byte per answer; 10^8 items with K = 3 take 0.53 GB). Without ``--dir`` the
   files go to a new folder in the system temporary directory. Not timed; reported as
   ``generate_seconds``.
2. For each worker count, in a fresh Python process (so that the peak memory of one run
   is not the peak of another, nor of the generation): ``summarize_dask`` on the folder,
   ``score_bin_em`` on the summary, ``nc_ece`` with those channels. ``seconds`` is the wall
   time of these three steps; interpreter start-up and imports are excluded and reported
   as ``startup_seconds``.
3. Peak memory: the child's own ``ru_maxrss`` plus, sampled every 50 ms with psutil, the
   summed resident memory of the child and all its descendants (worker processes of the
   ``processes`` or ``distributed`` schedulers); ``peak_rss_bytes`` is the larger.

Generated files are removed at the end unless ``--keep``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from bayescal.bench._io import environment, map_jobs, write_json

SCHEDULERS = ("threads", "processes", "distributed")


def add_arguments(parser) -> None:
    parser.add_argument("--items", type=int, default=100_000_000)
    parser.add_argument("--k", type=int, default=3, help="annotators (default 3)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--scheduler", choices=SCHEDULERS, default="threads")
    parser.add_argument("--dir", default=None, help="folder for the generated Parquet files")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument(
        "--reuse", action="store_true", help="reuse files already in --dir (skip generation)"
    )
    parser.add_argument("--file-rows", type=int, default=4_194_304)
    parser.add_argument("--row-group", type=int, default=1_048_576)
    parser.add_argument("--missing", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", dest="json_path", default=None)


# ------------------------------------------------------------------ generation
def _flip_rates(k: int):
    import numpy as np

    from bayescal.simulate import TOY_FN, TOY_FP

    fp, fn = np.array(TOY_FP), np.array(TOY_FN)
    reps = -(-k // fp.size)
    return np.tile(fp, reps)[:k], np.tile(fn, reps)[:k]


def _write_file(path, n, k, missing, seed, row_group):
    """One Parquet file of ``n`` toy items (the shifted toy curve, flip annotators)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n, dtype=np.float32) + np.where(
        rng.random(n, dtype=np.float32) < 0.5, -1, 1
    )
    z = (1.0 / (1.0 + np.exp(x - np.float32(0.3)))).astype(np.float32)
    # shifted calibration curve of the toy study: P(Y = 1 | z) = clip(z + 0.1)
    y = rng.random(n, dtype=np.float32) < np.clip(z + np.float32(0.1), 0, 1)
    fp, fn = _flip_rates(k)
    cols = {"score": pa.array(z, type=pa.float32())}
    for j in range(k):
        p1 = np.where(y, np.float32(1 - fn[j]), np.float32(fp[j]))
        lab = (rng.random(n, dtype=np.float32) < p1).astype(np.int8)
        miss = rng.random(n, dtype=np.float32) < missing
        cols[f"a{j + 1}"] = pa.array(lab, type=pa.int8(), mask=miss)
    pq.write_table(pa.table(cols), path, row_group_size=row_group, compression="snappy")


def generate(folder, items, k, *, file_rows, row_group, missing, seed, jobs=2):
    """Write the chunked Parquet data set; returns the file paths."""
    from pathlib import Path

    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, items, file_rows))
    tasks = []
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    for i, s in enumerate(starts):
        n = min(file_rows, items - s)
        tasks.append((str(folder / f"part-{i:05d}.parquet"), n, k, missing, seeds[i], row_group))
    map_jobs(_write_star, tasks, jobs if len(tasks) > 1 else 1)
    return [t[0] for t in tasks]


def _write_star(t):
    _write_file(*t)


# ----------------------------------------------------------------- one measured run (child process)
def measure(folder, workers: int, scheduler: str) -> dict:
    """Time summaries + score-bin EM + NC-ECE on ``folder`` (runs in the child process)."""
    import resource

    t_start = time.perf_counter()
    import dask
    import dask.dataframe  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    from bayescal.channels.em import score_bin_em
    from bayescal.metrics.ncece import nc_ece
    from bayescal.scale import summarize_dask

    client = cluster = None
    if scheduler == "distributed":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit=0,
        )
        client = Client(cluster)
    startup = time.perf_counter() - t_start
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    summary = summarize_dask(
        folder,
        groups=5,
        bins=10,
        client=client,
        scheduler="threads" if scheduler == "distributed" else scheduler,
        workers=workers,
    )
    t1 = time.perf_counter()
    fit = score_bin_em(summary)
    t2 = time.perf_counter()
    ece = nc_ece(summary, fit)
    t3 = time.perf_counter()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    if client is not None and cluster is not None:
        client.close()
        cluster.close()
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {
        "workers": workers,
        "scheduler": scheduler,
        "seconds": t3 - t0,
        "seconds_summaries": t1 - t0,
        "seconds_score_bin_em": t2 - t1,
        "seconds_nc_ece": t3 - t2,
        "startup_seconds": startup,
        # CPU time of this process over the timed steps (all threads; worker processes of the
        # processes / distributed schedulers are not included): cpu / wall shows how many
        # cores the threaded scheduler actually kept busy.
        "cpu_seconds_self": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime),
        "items_summarised": summary.n_items + int(summary.n_unannotated.values.sum()),
        "annotated_items": summary.n_items,
        "nc_ece": float(ece.value),
        "a": fit.a.values[0].tolist(),
        "b": fit.b.values[0].tolist(),
        "load_average_1min_after": os.getloadavg()[0],
        "peak_rss_self_bytes": self_rss,
        "peak_rss_children_max_bytes": child_rss,
    }


def _child_main() -> None:
    folder, workers, scheduler = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    print(json.dumps(measure(folder, workers, scheduler)))


def run_child(folder, workers: int, scheduler: str) -> dict:
    """Run :func:`measure` in a fresh process and sample its process tree's memory."""
    import psutil

    code = "from bayescal.bench.scale import _child_main; _child_main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(folder), str(workers), scheduler],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        total = 0
        try:
            procs = [root] + root.children(recursive=True)
        except psutil.NoSuchProcess:
            break
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        peak = max(peak, total)
        time.sleep(0.05)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"measured run failed (workers={workers}):\n{err[-4000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_tree_sampled_bytes"] = peak
    result["peak_rss_bytes"] = max(peak, result["peak_rss_self_bytes"])
    return result


# ------------------------------------------------------------------ entry point
def run(args) -> int:
    import shutil
    import tempfile
    from pathlib import Path

    from bayescal.errors import ConfigError
    from bayescal.scale import require

    require("dask", "bayescal bench scale")
    require("pyarrow", "bayescal bench scale")
    require("psutil", "bayescal bench scale")
    if args.items < 1 or args.k < 2 or any(w < 1 for w in args.workers):
        raise ConfigError(
            "--items must be positive, --k at least 2 and every --workers value at least 1."
        )
    if not 0 <= args.missing < 1:
        raise ConfigError("--missing must be in [0, 1).")
    made_dir = args.dir is None
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bayescal-scale-"))
    generate_seconds = None
    try:
        if args.reuse and any(folder.glob("*.parquet")):
            files = sorted(folder.glob("*.parquet"))
        else:
            if any(folder.glob("*.parquet")):
                raise ConfigError(
                    f"{folder} already holds Parquet files; pass --reuse or an empty --dir."
                )
            t0 = time.perf_counter()
            files = generate(
                folder,
                args.items,
                args.k,
                file_rows=args.file_rows,
                row_group=args.row_group,
                missing=args.missing,
                seed=args.seed,
            )
            generate_seconds = time.perf_counter() - t0
        disk_bytes = sum(os.path.getsize(f) for f in files)
        results = [run_child(folder, w, args.scheduler) for w in args.workers]
    finally:
        if not args.keep:
            for f in folder.glob("part-*.parquet"):
                f.unlink()
            if made_dir:
                shutil.rmtree(folder, ignore_errors=True)
    main = results[-1]
    by_workers = {r["workers"]: r["seconds"] for r in results}
    out = {
        "items": args.items,
        "k": args.k,
        "workers": main["workers"],
        "seconds": main["seconds"],
        "peak_rss_bytes": main["peak_rss_bytes"],
        "generate_seconds": generate_seconds,
        "scheduler": args.scheduler,
        "results": results,
        "speedup": (by_workers[min(by_workers)] / by_workers[max(by_workers)])
        if len(by_workers) > 1
        else None,
        "data": {
            "files": len(files),
            "disk_bytes": disk_bytes,
            "file_rows": args.file_rows,
            "row_group": args.row_group,
            "missing": args.missing,
            "seed": args.seed,
            "layout": "score float32, a1..aK int8 with nulls (Parquet, snappy)",
            "kept": bool(args.keep),
            "dir": str(folder),
        },
        "targets": {"seconds": 300, "peak_rss_bytes": 2 * 1024**3},
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0

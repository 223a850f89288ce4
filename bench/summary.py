"""Rounds into figures that rank: each path's median over its rounds with the spread (min–max
of the rounds), ours beside its limit and beside each peer. Two figures whose spreads overlap
are "level": one run of a few seconds on a shared machine cannot tell them apart."""
import statistics


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "rounds": values}


def median_round(figures):
    """The index of the round whose req/s is the median one (the lower middle for an even count)."""
    order = sorted(range(len(figures)), key=lambda i: figures[i].get("per_second") or 0)
    return order[(len(order) - 1) // 2]


def verdict(ours, theirs):
    """ahead / behind only when the spreads do not overlap; level otherwise."""
    if ours["min"] > theirs["max"]:
        return "ahead"
    if ours["max"] < theirs["min"]:
        return "behind"
    return "level"


def peer_rounds(rounds, key):
    """{peer: {"label", "figures": [one per round]} or {"label", "error"}} for path `key` from
    each round's {peer: {"label", "paths"} or {"label", "error"}}."""
    out = {}
    for one_round in rounds:
        for name, result in one_round.items():
            entry = out.setdefault(name, {"label": result["label"], "figures": []})
            figure = (result.get("paths") or {}).get(key)
            if result.get("error"):
                entry["error"] = result["error"]
            elif figure is None:
                entry["error"] = "(no such path)"
            else:
                entry["figures"].append(figure)
    return out


def row(name, figures, limit_name, limits, peers):
    """One path's row: `figure` is its median round (with that round's p50, p99 and CPU), the
    spreads of req/s, p99 and the per-round ratio to the limit (each round against its own
    limit), and for each peer its spread and the verdict."""
    ours = spread([f.get("per_second") for f in figures])
    limit = spread([l.get("per_second") for l in limits])
    ratios = spread([f["per_second"] / l["per_second"] if l.get("per_second") else None
                     for f, l in zip(figures, limits)])
    out = {"path": name, "figure": figures[median_round(figures)], "rounds": figures, "per_second": ours,
           "p99_ms": spread([f.get("p99_ms") for f in figures]), "p50_ms": spread([f.get("p50_ms") for f in figures]),
           "limit_name": limit_name, "limit": limits[median_round(limits)], "limit_per_second": limit,
           "ratio": ratios["median"] if ratios else None, "ratio_spread": ratios}
    if peers:
        out["peers"] = {}
        for peer, entry in peers.items():
            valid = [f for f in entry["figures"] if f.get("valid", True)]
            if entry.get("error") or not valid or len(valid) < len(entry["figures"]):
                out["peers"][peer] = {"label": entry["label"], "valid": False,
                                      "error": entry.get("error") or "INVALID: non-2xx answers or socket errors",
                                      "rounds": entry["figures"]}
                continue
            theirs = spread([f["per_second"] for f in valid])
            out["peers"][peer] = {"label": entry["label"], "valid": True, "per_second": theirs,
                                  "p99_ms": spread([f.get("p99_ms") for f in valid]), "rounds": valid,
                                  "ratio": ours["median"] / theirs["median"] if theirs["median"] else None,
                                  "verdict": verdict(ours, theirs)}
    return out


def fmt(value, digits=1):
    return "—" if value is None else "{:,.{}f}".format(value, digits)


def fmt_spread(s, digits=1):
    """`median (min–max)`, or the one value of a single round."""
    if not s:
        return "—"
    if len(s["rounds"]) == 1:
        return fmt(s["median"], digits)
    return "%s (%s–%s)" % (fmt(s["median"], digits), fmt(s["min"], digits), fmt(s["max"], digits))


def print_table(rows, title):
    print("\n%s (median of the rounds, min–max in brackets; ratio: each round against its own limit)" % title)
    print("%-46s %-26s %-22s   %-28s %-26s %s" % ("path", "req/s", "p99 ms", "limit", "limit/s", "ratio"))
    for r in rows:
        print("%-46s %-26s %-22s   %-28s %-26s %s" % (
            r["path"], fmt_spread(r["per_second"]), fmt_spread(r["p99_ms"], 2), r["limit_name"],
            fmt_spread(r["limit_per_second"]), fmt_spread(r["ratio_spread"], 2)))


def print_peers(rows):
    compared = [r for r in rows if r.get("peers")]
    if not compared:
        return
    print("\npeers (same rounds, same wrk scripts, same PostgreSQL; level = the spreads overlap):")
    for r in compared:
        print("  %-44s ours %s" % (r["path"], fmt_spread(r["per_second"])))
        for peer in r["peers"].values():
            if not peer["valid"]:
                print("    %-42s %s" % (peer["label"], peer["error"][:80]))
                continue
            print("    %-42s %-26s ours/peer %.2f: %s" % (peer["label"], fmt_spread(peer["per_second"]),
                                                         peer["ratio"] or 0, peer["verdict"]))

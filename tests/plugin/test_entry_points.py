"""The plugin's C entry points driven directly by plugin_entry_points.cpp,
as Kokkos calls them, without a Kokkos runtime: every Kokkos version, and
device space names a host-only build never produces."""

import pytest

from plugin_helpers import count, nbytes, region, shown

pytestmark = pytest.mark.program("plugin_entry_points")


def check_entry_points(case, plugin, kokkos_major, chained):
    fencing = "1" if chained else "0"
    run = case.run(command=[case.program, plugin, fencing],
                   CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    assert run.status == 0 and "plugin_entry_points: ok" in run.stdout, \
        f"the entry points behave\n{run}"
    report = case.json("report.json", run)
    total = report["total"]
    assert (count(total, "to_device") == 3 and
            nbytes(total, "to_device") == 800 + 256 + 16 and
            count(total, "to_host") == 1 and count(total, "sync") == 2 and
            total["kinds"]["sync"]["implicit"] == 1), \
        ("copies and syncs, none before init or after finalize\n" +
         shown(total["kinds"]))
    step = region(report, "step")
    assert (step["calls"] == 1 and count(step, "to_device") == 1 and
            nbytes(step, "to_device") == 800 and
            step["own"]["to_device"]["blocking"] == 1 and
            count(step, "sync") == 2), f"region 'step'\n{shown(step)}"
    assert (region(report, "outer")["transfers"] == 0 and
            count(region(report, "outer/inner"), "to_host") == 1), \
        "an event counts in the innermost region only"
    outside = report["regions"][0]["own"]["to_device"]  # in no region
    asynchronous = 1 if kokkos_major >= 4 else 0
    assert outside["count"] == 1 and outside["async"] == asynchronous, \
        f"an unfenced copy is asynchronous on Kokkos 4\n{shown(outside)}"
    sites = {site["file"] for site in total["top_sites"]}
    assert sites == {site for site in sites
                     if site.endswith("plugin_entry_points.cpp")}, \
        f"call sites are in the calling program: {sites}"
    dual = report["dual_views"]
    assert (len(dual["syncs"]) == 1 and dual["syncs"][0]["label"] == "field"
            and dual["syncs"][0]["bytes"] == 256 and
            dual["syncs"][0]["copy_kind"] == "to_device"), \
        f"a sync linked to its copy\n{shown(dual)}"
    assert [entry["label"] for entry in dual["syncs_without_copy"]] == \
        ["constant"], f"a sync that copied nothing\n{shown(dual)}"
    assert [(entry["label"], entry["on"])
            for entry in dual["modified_never_synced"]] == \
        [("forgotten", "device")], \
        f"the synced modify is gone, the forgotten one listed\n{shown(dual)}"
    assert report["metadata"].get("entry_points") == "yes", "metadata"
    trace = case.json("trace.json", run)["traceEvents"]

    def names(category):
        return sorted(event["name"] for event in trace
                      if event.get("cat") == category)

    assert names("kernel") == ["step::advance", "step::norm", "step::scan"], \
        "kernel slices"
    assert len(names("fence")) == 2, \
        f"fence slices (a copy's own fence is part of the copy): " \
        f"{names('fence')}"
    assert {"step", "outer", "inner", "dual"} <= set(names("region")), \
        f"region slices: {names('region')}"
    assert len(names("copy")) == 4 and len(names("dual_view")) == 4, \
        f"copy slices and DualView instants\n{shown(trace)}"
    if chained:
        counts = case.tool_counts()
        # Every call after init reaches the next tool, unbalanced ones too.
        for key, value in {"init": 1, "finalize": 1, "deep_copy": 5,
                           "end_deep_copy": 6, "fence": 5, "end_fence": 6,
                           "push_region": 5, "pop_region": 6, "kernel": 1,
                           "dual_view_sync": 2, "dual_view_modify": 2}.items():
            assert counts.get(key) == value, \
                f"the next tool received {key} {value}\n{shown(counts)}"


def test_entry_points(case, plugin, kokkos_major):
    check_entry_points(case, plugin, kokkos_major, chained=False)


@pytest.mark.chain
def test_entry_points_chained(case, plugin, kokkos_major):
    """The same sequence with the test tool after the plugin (ctest puts
    both in the variable Kokkos reads)."""
    check_entry_points(case, plugin, kokkos_major, chained=True)

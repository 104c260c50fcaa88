// SPDX-License-Identifier: MIT
// profile (out-of-process runs), hardware (what this machine is).
#include "cmd_profile.h"

#include <switchyard/diagnosis/vulkanicd.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/ceilingtext.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/report/abreport.h>
#include <switchyard/report/compare.h>
#include <switchyard/report/report.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/tuning/tune.h>
#include <switchyard/tuning/tunedresolve.h>
#include <switchyard/worker/abcontroller.h>
#include <switchyard/worker/inspect.h>
#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workercontroller.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace switchyard::cli {
namespace {

using nlohmann::json;

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string human_time(double s) {
    if (s <= 0)
        return "-";
    if (s < 1e-6)
        return fmt("%.1f ns", s * 1e9);
    if (s < 1e-3)
        return fmt("%.2f us", s * 1e6);
    if (s < 1)
        return fmt("%.3f ms", s * 1e3);
    return fmt("%.3f s", s);
}

std::vector<std::string> row_cells(const ProfileRow& r) {
    const bool m = r.measured();
    return {r.spec.op,
            r.spec.size,
            r.spec.device,
            r.spec.backend,
            r.spec.arch + "/" + r.spec.variant + (r.spec.tuned_from.empty() ? "" : " (tuned)"),
            std::string(to_string(r.status)),
            m ? human_time(r.stats.median) : "-",
            m ? fmt("%.2f", r.gbps) : "-",
            m ? fmt("%.2f", r.gflops) : "-",
            m && !r.level.empty() ? r.level : "-",
            ceiling_percent(r).empty() ? "-" : ceiling_percent(r),
            m && r.reference_speedup > 0
                ? fmt(r.reference_speedup < 10 ? "%.2fx" : "%.0fx", r.reference_speedup)
                : "-",
            !m                      ? "-"
            : r.stats.noise_known() ? fmt("%.2f%%", r.stats.rel_noise * 100)
                                    : "n/a",
            !m ? "-"
            : r.clock.median_ghz > 0
                ? fmt("%.2f", r.clock.median_ghz) + (r.clock.throttled ? "!" : "")
                : "none",
            m ? std::to_string(r.stats.count) : "-",
            r.parity.verdict()};
}

const std::vector<std::string> kRowHeader = {
    "op",      "size",  "device",   "backend", "arch/variant", "status", "median",  "GB/s",
    "GFLOP/s", "level", "%ceiling", "xref",    "noise",        "GHz",    "samples", "parity"};

// The dispatch-regret table of an --all-variants run: per (op, size, device), the cell
// dispatch picks against the fastest that passed parity.
void print_dispatch(const Report& report) {
    if (report.dispatch.empty())
        return;
    std::vector<std::vector<std::string>> table;
    std::size_t regrets = 0;
    std::size_t on_threads = 0;   // regrets that more threads explain
    std::size_t on_tolerance = 0; // regrets that a looser tolerance explains
    bool threads_differ = false;
    for (const auto& f : report.dispatch)
        threads_differ = threads_differ || f.same_threads.has_value();
    for (const auto& f : report.dispatch) {
        regrets += f.regret();
        on_threads += f.regret() && f.same_threads &&
                      f.same_threads->verdict == DispatchVerdict::Ok &&
                      f.fastest_threads > f.resolved_threads;
        on_tolerance +=
            f.regret() && f.same_tolerance && f.same_tolerance->verdict == DispatchVerdict::Ok;
        table.push_back({untrusted(f.op), untrusted(f.size), untrusted(f.device),
                         untrusted(f.resolved), untrusted(f.fastest), fmt("%.2fx", f.speedup),
                         fmt("%.0f%%", f.threshold * 100),
                         f.fastest == f.resolved ? "-" : fmt("%.2g", f.p_value),
                         f.same_code ? std::string(to_string(f.verdict)) + " (same code)"
                                     : std::string(to_string(f.verdict))});
        if (!threads_differ)
            continue;
        // The threads of the two cells, and the pick against the fastest on its own threads.
        auto& row = table.back();
        const auto picked = std::to_string(f.resolved_threads);
        const auto fastest = std::to_string(f.fastest_threads);
        row.push_back(f.resolved_threads <= 0 || f.fastest_threads <= 0 ? std::string("-")
                      : picked == fastest                               ? picked
                                          : picked + " vs " + fastest);
        if (!f.same_threads) {
            row.push_back("-");
            continue;
        }
        const auto& s = *f.same_threads;
        row.push_back(s.fastest == f.resolved
                          ? std::string("the pick")
                          : untrusted(s.fastest) + " " + fmt("%.2fx ", s.speedup) +
                                std::string(to_string(s.verdict)));
    }
    std::vector<std::string> header{"op",      "size",      "device", "dispatch picks", "fastest",
                                    "speedup", "threshold", "p",      "verdict"};
    if (threads_differ)
        header.insert(header.end(), {"threads", "fastest at the pick's threads"});
    std::cout << "\nDispatch (the resolved cell against the fastest that passed parity; regret = "
                 "faster by more than the threshold, U test p < 0.05):\n"
              << format_table(header, table);
    for (const auto& f : report.dispatch)
        if (f.regret() || f.same_code)
            std::cout << "dispatch: " << untrusted(f.message()) << "\n";
    std::cout << regrets << " of " << report.dispatch.size()
              << " (op, size, device) would run faster on another cell";
    if (on_threads > 0)
        std::cout << " (" << on_threads << " of them only on more threads: on the pick's own "
                  << "threads it is the fastest, or within the threshold)";
    if (on_tolerance > 0)
        std::cout << " (" << on_tolerance << " of them only at a looser tolerance: at the "
                  << "pick's it is the fastest, or within the threshold)";
    std::cout << "\n";
}

// The memory beside the DRAM rows (ProfileRow::memory): what their ceiling's probe moved
// beside each, its share of the ceiling, and how close the row came to it.
void print_memory(const Report& report) {
    std::vector<std::vector<std::string>> table;
    std::size_t busy = 0;
    for (const auto& r : report.rows) {
        const double share = memory_share(r);
        if (!r.measured() || !(share > 0))
            continue;
        const bool was_busy = memory_busy(r);
        busy += was_busy;
        table.push_back({untrusted(r.spec.op), untrusted(r.spec.size), untrusted(r.spec.device),
                         untrusted(r.spec.arch + "/" + r.spec.variant), ceiling_percent(r),
                         untrusted(r.memory.probe), fmt("%.2f", r.memory.median_gbs),
                         fmt("%.0f%%", share * 100) + (was_busy ? " busy" : ""),
                         fmt("%.0f%%", r.gbps / r.memory.median_gbs * 100)});
    }
    if (table.empty())
        return;
    std::cout << "\nMemory beside the DRAM rows (their ceiling's probe, timed before and after "
                 "each row's samples; busy: under "
              << fmt("%.0f", kMemoryBusyShare * 100) << " % of the ceiling):\n"
              << format_table({"op", "size", "device", "arch/variant", "%ceiling", "probe",
                               "probe GB/s", "probe %ceiling", "row/probe"},
                              table);
    if (busy > 0)
        std::cout << "note: memory was busy beside " << busy << " of " << table.size()
                  << " DRAM rows: other work was taking its bandwidth, so their %ceiling reads "
                     "low for the machine, not for the kernel; row/probe is how close each came "
                     "to what memory gave then\n";
}

// Where the 1-thread CPU rows ran: on one CPU, the one their ceilings were measured on
// (ProfileRow::pinned_cpu, CpuPeaks::pinned_cpu); said once, with how to choose another.
void print_pinning(const Report& report) {
    std::set<int> cpus;
    std::int64_t pinned = 0;
    for (const auto& r : report.rows)
        if (r.pinned_cpu >= 0) {
            cpus.insert(r.pinned_cpu);
            ++pinned;
        }
    if (pinned == 0)
        return;
    const int peaks_cpu = report.context.pinned_cpu();
    std::string where;
    for (int c : cpus)
        where += (where.empty() ? "" : ", ") + std::to_string(c);
    std::cout << "note: the " << pinned << " 1-thread CPU row" << (pinned == 1 ? "" : "s")
              << " ran on CPU " << where;
    if (cpus.size() == 1 && peaks_cpu == *cpus.begin())
        std::cout << ", where the 1-thread ceilings were measured";
    else if (peaks_cpu < 0)
        std::cout << "; the 1-thread ceilings were not measured on one CPU";
    else
        std::cout << "; the 1-thread ceilings were measured on CPU " << peaks_cpu;
    std::cout << " (--pin-cpu <n> or SWITCHYARD_PIN_CPU=<n> picks another, off runs them "
                 "unpinned)\n";
}

ProfileSettings to_settings(const ProfileOptions& o) {
    ProfileSettings s;
    s.ops = o.ops;
    s.devices = o.devices;
    // Every size checked against the ops it applies to and this machine's memory before a
    // worker starts (the core's one grammar); the usage error names --sizes.
    try {
        s.sizes = parse_size_tokens(o.sizes, o.ops);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--sizes: " + std::string(e.what()));
    }
    s.all_variants = o.all_variants;
    s.cells = o.cells;
    s.variant = o.variant;
    s.use_tuning = !o.no_tuning;
    s.cold = o.cold;
    // The ranges are checked as the options are parsed (add_profile_commands).
    s.row_timeout_s = o.timeout;
    s.time_budget_s = o.budget;
    s.max_noise = o.noise / 100.0;
    s.warmup_s = o.warmup;
    s.reference_budget_s = o.reference_budget;
    s.throttle_threshold = o.throttle_threshold;
    s.min_samples = o.min_samples;
    s.seed = std::uint64_t(o.seed);
    s.repeat = o.repeat;
    s.slices = o.slices;
    return s;
}

// The CPU ceilings of --ceilings-from's report, checked to be this machine's; a usage error
// (exit 2) otherwise. The run's context says where they came from.
std::optional<CeilingSetChoice> reused_peaks(const ProfileOptions& o,
                                             std::optional<CeilingsProvenance>& provenance) {
    if (o.ceilings_from.empty())
        return std::nullopt;
    try {
        const auto earlier = Report::load(o.ceilings_from);
        auto peaks = reusable_cpu_peaks(earlier, o.ceilings_from);
        const std::string date =
            earlier.context.date.empty() ? "an unknown date" : earlier.context.date;
        provenance = CeilingsProvenance{o.ceilings_from, date};
        return reported_ceiling_choice(o.ceilings_from, date, std::move(peaks));
    } catch (const ReportError& e) {
        throw std::invalid_argument("--ceilings-from: " + std::string(e.what()));
    }
}

// When a cached set of ceilings is used: --fresh-ceilings, --ceilings-max-age (else
// SWITCHYARD_CEILINGS_MAX_AGE, else the default).
CeilingCachePolicy ceiling_policy(const ProfileOptions& o) {
    CeilingCachePolicy policy;
    policy.fresh = o.fresh_ceilings;
    policy.max_age_days =
        o.ceilings_max_age ? *o.ceilings_max_age : default_ceilings_max_age_days();
    return policy;
}

// Marks a context whose CPU ceilings came from an earlier report.
void note_reused(RunContext& context, const std::optional<CeilingsProvenance>& provenance) {
    if (!provenance)
        return;
    context.ceilings_from = provenance;
    context.warnings.push_back("CPU ceilings reused from " + provenance->report + " (measured " +
                               provenance->date + "), not measured in this run");
}

// A profile run as the options ask, its rows streamed as they finish (progress on stderr in
// human mode, the protocol's lines with --jsonl); what profile and tune print from.
struct Measured {
    Report report;
    ProfileSettings settings;
    bool reused_ceilings = false; // --ceilings-from (its warning says so)
};

Measured measure(const ProfileOptions& o) {
    const auto settings = to_settings(o);
    // Every name the run uses, before a worker starts or anything is measured (exit 2).
    check_profile_names(settings, default_backends(), true);
    std::optional<CeilingsProvenance> provenance;
    const auto reused = reused_peaks(o, provenance);
    const auto policy = ceiling_policy(o);
    const auto cache = default_ceiling_cache();
    const bool human = !o.json && !o.jsonl && !o.csv;
    auto line = [](const json& j) { std::cout << json_text(j) << std::endl; };
    Report report;
    std::size_t total = 0;
    // Human mode: one progress line per finished row on stderr, the table at the end.
    auto print_row = [&](const ProfileRow& r) {
        if (human)
            std::cerr << "[" << r.spec.index + 1 << "/" << total << "] " << r.spec.label() << " ["
                      << r.spec.backend << "]: " << to_string(r.status) << std::endl;
    };
    WorkerController::Options wo;
    wo.executable = "/proc/self/exe";
    wo.settings = settings;
    // The cache serves the devices' figures in any case; the CPU's come from an earlier
    // report where one is given.
    wo.ceiling_cache = cache;
    wo.ceiling_policy = policy;
    if (reused) {
        wo.cpu_peaks = reused->peaks;
        wo.ceiling_set = reused->set;
    }
    WorkerController controller(wo);
    WorkerController::Callbacks cb;
    cb.on_plan = [&](const std::vector<RowSpec>& plan) { total = plan.size(); };
    if (o.jsonl) {
        cb.on_context = [&](const RunContext& c) {
            RunContext marked = c;
            note_reused(marked, provenance);
            line(protocol::context_message(&marked));
        };
        cb.on_plan = [&](const std::vector<RowSpec>& plan) {
            total = plan.size();
            line(protocol::plan_message(plan));
        };
        cb.on_row_start = [&](const RowSpec& r) { line(protocol::row_start_message(r.index)); };
        cb.on_progress = [&](std::int64_t i, const std::string& phase, std::int64_t n) {
            line(protocol::progress_message(i, phase, n));
        };
    }
    // Human mode, a run of several passes: a line as each pass starts, since its rows are
    // reported (merged) only in the last one.
    if (human && settings.passes() > 1) {
        std::int64_t pass = 0, last_index = -1;
        cb.on_row_start = [&, pass, last_index](const RowSpec& r) mutable {
            if (r.index <= last_index || pass == 0)
                std::cerr << "pass " << ++pass << " of " << settings.passes() << std::endl;
            last_index = r.index;
        };
    }
    cb.on_row = [&](const ProfileRow& r) {
        if (o.jsonl)
            line(protocol::row_message(r));
        print_row(r);
    };
    cb.on_worker_stderr = [](const std::string& l) { std::cerr << "worker: " << l << "\n"; };
    try {
        report = controller.run(cb);
    } catch (const WorkerUsageError& e) {
        throw std::invalid_argument(e.what());
    }
    note_reused(report.context, provenance);
    return {std::move(report), settings, reused.has_value()};
}

// -o, --report: a file that cannot be written is said before anything is measured.
void check_output(const std::string& option, const std::string& path) {
    if (path.empty())
        return;
    try {
        Report::check_writable(path);
    } catch (const ReportError& e) {
        throw std::invalid_argument(option + ": " + e.what() +
                                    "; nothing was measured (give a file in a folder you can "
                                    "write)");
    }
}

// Writes the report; one that cannot be written where asked (the folder went away during
// the run) goes to a fallback file, named on stderr: the measurements are never lost.
int save_report(const Report& report, const std::string& path) {
    std::string why;
    const auto fallback = report.save_with_fallback(path, why);
    if (fallback.empty())
        return Ok;
    std::cerr << "switchyard-cli: " << why << "\nswitchyard-cli: the report was written to "
              << fallback << " instead\n";
    return Failure;
}

int run_profile(const ProfileOptions& o) {
    check_output("-o", o.output);
    auto [report, settings, reused] = measure(o);
    const bool human = !o.json && !o.jsonl && !o.csv;
    auto line = [](const json& j) { std::cout << json_text(j) << std::endl; };
    std::int64_t bad = 0;
    for (const auto& r : report.rows)
        bad += r.status != RowStatus::Ok;
    if (o.jsonl)
        line(protocol::done_message(std::int64_t(report.rows.size()), bad));
    // Which ceilings judged the rows (--ceilings-from says so in its warning): on stderr
    // where stdout is machine-readable.
    const std::string ceilings_note =
        reused ? std::string() : ceiling_set_note(report.context.ceiling_set);
    if (!human && !ceilings_note.empty())
        std::cerr << "switchyard-cli: note: " << ceilings_note << "\n";
    if (o.json)
        std::cout << json_text(report.to_json(), 1) << "\n";
    if (o.csv)
        std::cout << report.to_csv();
    if (human) {
        std::vector<std::vector<std::string>> table;
        for (const auto& r : report.rows)
            table.push_back(row_cells(r));
        std::cout << format_table(kRowHeader, table);
        print_dispatch(report);
        print_memory(report);
        print_pinning(report);
        for (const auto& r : report.rows)
            if (r.status != RowStatus::Ok && !r.reason.empty())
                std::cout << r.spec.label() << " [" << r.spec.backend
                          << "]: " << to_string(r.status) << ": " << r.reason.substr(0, 400)
                          << "\n";
        for (const auto& w : report.context.warnings)
            std::cout << "warning: " << w << "\n";
        // On a noisy machine one note says so, instead of a "noisy" warning per row.
        const auto noise = noise_verdict(report.rows, settings.max_noise);
        for (const auto& r : report.rows)
            for (const auto& w : r.warnings)
                if (!noise.noisy_machine() || w.rfind("noisy:", 0) != 0)
                    std::cout << "warning: " << r.spec.label() << ": " << w << "\n";
        if (noise.noisy_machine())
            std::cout << "note: " << noise.message() << "\n";
        if (!ceilings_note.empty())
            std::cout << "note: " << ceilings_note << "\n";
        std::cout << report.rows.size() << " rows, " << bad << " not ok\n";
    }
    if (!o.output.empty() && save_report(report, o.output) != Ok)
        return Failure;
    return bad ? Failure : Ok;
}

int run_hardware(bool as_json, bool probe, double probe_timeout, double load_timeout,
                 const CeilingCachePolicy& policy) {
    const auto& cpu = cpu_info();
    const auto host = host_info();
    // Device backends publish their devices when loaded (opencl:0 needs the opencl plugin):
    // they are loaded, listed and probed in an inspection worker; the CPU here.
    InspectOptions options;
    options.probe_timeout_s = probe_timeout;
    options.timeout_s = load_timeout;
    // Measured once and kept, as a profile keeps them: the CPU's here, the devices' in the
    // inspection worker.
    nlohmann::json cpu_set;
    if (probe)
        cpu_set = prepare_with_ceiling_cache(default_devices(), options, policy);
    const auto inspected =
        inspect_device_backends(default_backends(), default_devices(), probe, options);
    for (const auto& f : inspected.failed)
        std::cerr << "switchyard-cli: device backend '" << f.backend << "' failed to load ("
                  << to_string(f.cause) << "): " << f.reason << "\n";
    if (!inspected.fatal.empty())
        std::cerr << "switchyard-cli: " << inspected.fatal << "\n";
    auto devices = default_devices().devices();
    const auto cpu_device = find_cpu_device(default_devices());
    const auto peaks = cpu_device ? cpu_device->peaks() : std::nullopt;
    const int ceilings_cpu = peaks ? peaks->pinned_cpu : -1;
    // The Vulkan loader's drivers, read without loading them: why a GPU is missing there.
    const auto vulkan_icds = find_vulkan_icds();
    if (as_json) {
        json j = {{"format", "switchyard.hardware"},
                  {"format_version", 1},
                  {"cpu", cpu.to_json()},
                  {"host", host.to_json()},
                  {"devices", json::array()},
                  {"openblas", openblas_info().to_json()},
                  {"vulkan_icds", vulkan_icds},
                  {"warnings", host_measurement_warnings(ceilings_cpu)}};
        if (const auto w = openblas_core_warning(openblas_info()); !w.empty())
            j["warnings"].push_back(w);
        if (peaks)
            j["cpu_peaks"] = peaks->to_json();
        if (!cpu_set.is_null())
            j["ceiling_set"] = cpu_set;
        for (const auto& d : devices)
            j["devices"].push_back(d->info());
        std::cout << json_text(j, 1) << "\n";
        return Ok;
    }
    std::cout << "CPU:      " << cpu.brand << " (" << cpu.vendor << ", " << cpu.microarchitecture
              << ", family " << cpu.family << " model " << cpu.model << " stepping " << cpu.stepping
              << ")\n";
    std::cout << "Cores:    " << cpu.physical_cores << " physical, " << cpu.logical_cpus
              << " logical (this process)\n";
    std::cout << "Caches:   " << cpu.caches_summary();
    if (!cpu.cache_note.empty())
        std::cout << "\n          (" << cpu.cache_note << ")";
    std::cout << "\nISA:      " << cpu.architecture << ", levels: " << cpu.isa_summary()
              << "\nFeatures: ";
    for (std::size_t i = 0; i < cpu.features.size(); ++i)
        std::cout << (i ? " " : "") << cpu.features[i];
    std::cout << "\nHost:     " << host.hostname << ", " << host.distro << ", " << host.os << "\n";
    std::cout << "Memory:   " << (host.memory_bytes >> 20) << " MiB\n";
    std::cout << "Governor: " << (host.governor.empty() ? "(not readable)" : host.governor)
              << "\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : devices) {
        const auto& i = d->info();
        rows.push_back({i.id, i.name, i.arch,
                        i.peak_bandwidth_gbs > 0 ? fmt("%.1f GB/s", i.peak_bandwidth_gbs) : "-",
                        i.peak_gflops > 0 ? fmt("%.0f GFLOP/s", i.peak_gflops) : "-",
                        i.has_device_timer ? "device" : "host"});
    }
    std::cout << format_table({"device", "name", "arch", "peak bandwidth", "peak fp32", "timer"},
                              rows);
    for (const auto& d : devices) {
        const auto& i = d->info();
        if (!i.peak_bandwidth_source.empty())
            std::cout << "  " << i.id << " bandwidth: " << i.peak_bandwidth_source << "\n";
        if (!i.peak_gflops_source.empty())
            std::cout << "  " << i.id << " fp32: " << i.peak_gflops_source << "\n";
    }
    for (const auto& d : devices) {
        const auto& i = d->info();
        if (i.ceilings.empty())
            continue;
        std::vector<std::vector<std::string>> crows;
        for (const auto& c : i.ceilings)
            crows.push_back({c.id, c.level.empty() ? "-" : c.level,
                             c.value > 0
                                 ? fmt(c.kind == "compute" ? "%.1f GFLOP/s" : "%.1f GB/s", c.value)
                                 : "-",
                             c.measured ? c.method : "theoretical: " + c.method});
        std::cout << "\nCeilings of " << i.id << ":\n"
                  << format_table({"id", "level", "value", "method"}, crows);
    }
    if (!vulkan_icds.empty()) {
        std::vector<std::vector<std::string>> vrows;
        for (const auto& icd : vulkan_icds)
            vrows.push_back({icd.manifest, icd.api_version.empty() ? "-" : icd.api_version,
                             icd.ok() ? icd.resolved.path : icd.problem});
        std::cout << "\nVulkan drivers (the loader's manifests):\n"
                  << format_table({"manifest", "api", "library or problem"}, vrows);
        if (const auto only_cpu = vulkan_only_cpu(vulkan_icds); !only_cpu.empty())
            std::cout << "warning: " << only_cpu
                      << " (`switchyard-cli doctor` says how to fix it)\n";
    }
    if (probe) {
        const auto blas = openblas_info();
        if (blas.present)
            std::cout << "\nOpenBLAS: core " << blas.corename << ", " << blas.threads
                      << " threads (" << blas.config << ")\n";
    }
    auto warnings = host_measurement_warnings(ceilings_cpu);
    if (const auto w = openblas_core_warning(openblas_info()); !w.empty())
        warnings.push_back(w);
    for (const auto& w : warnings)
        std::cout << "warning: " << w << "\n";
    // Where each device's ceilings came from: kept from an earlier run, or measured now.
    if (const auto note = ceiling_set_note(cpu_set); !note.empty())
        std::cout << "note: cpu: " << note << "\n";
    for (const auto& d : devices)
        if (const Value* set = d->info().properties.find("ceiling_set"))
            if (const auto note = ceiling_set_note(nlohmann::json(*set)); !note.empty())
                std::cout << "note: " << d->info().id << ": " << note << "\n";
    return Ok;
}

// ab's own options (the run's are ProfileOptions').
struct AbOptions {
    std::string a, b;               // plugin folders
    std::string a_tuning, b_tuning; // tuning files, or "none"
    std::int64_t pairs = AbController::kDefaultPairs;
    std::int64_t min_pairs = AbController::kSettlePairs;
    double threshold = CompareOptions{}.min_effect * 100; // percent
    bool json = false, fail_on_regression = false;
    std::string output;
};

// A side as the options give it, checked: a folder that exists, a tuning file that exists.
AbSide ab_side(const char* name, const std::string& dir, const std::string& tuning) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!dir.empty() && !fs::is_directory(dir, ec))
        throw std::invalid_argument(std::string("--") + name + ": '" + dir +
                                    "' is not a folder; give the plugin folder of side " + name +
                                    " (where its *.plugin.json and library are)");
    if (!tuning.empty() && tuning != AbSide::kNoTuning && !fs::is_regular_file(tuning, ec))
        throw std::invalid_argument(std::string("--") + name + "-tuning: '" + tuning +
                                    "' is not a file; give a tuning file (switchyard-cli tune "
                                    "writes one) or 'none' for the fallback chain alone");
    AbSide side;
    side.plugin_dir = dir.empty() ? dir : fs::absolute(dir, ec).string();
    side.tuning =
        tuning.empty() || tuning == AbSide::kNoTuning ? tuning : fs::absolute(tuning, ec).string();
    return side;
}

int run_ab(const ProfileOptions& o, const AbOptions& ab) {
    if (ab.a.empty() && ab.a_tuning.empty() && ab.b.empty() && ab.b_tuning.empty())
        throw std::invalid_argument("ab: give what differs between the sides: --a and --b (two "
                                    "plugin folders), or --a-tuning and --b-tuning");
    AbController::Options options;
    options.executable = "/proc/self/exe";
    options.settings = to_settings(o);
    options.a = ab_side("a", ab.a, ab.a_tuning);
    options.b = ab_side("b", ab.b, ab.b_tuning);
    options.pairs = ab.pairs;
    options.min_pairs = ab.min_pairs;
    options.compare.min_effect = ab.threshold / 100;
    std::optional<CeilingsProvenance> provenance;
    if (const auto reused = reused_peaks(o, provenance)) {
        options.cpu_peaks = reused->peaks;
        options.ceiling_set = reused->set;
    } else {
        options.ceiling_cache = default_ceiling_cache();
        options.ceiling_policy = ceiling_policy(o);
    }
    AbController controller(options);
    AbController::Callbacks cb;
    std::size_t total = 0;
    cb.on_plan = [&](const std::vector<RowSpec>& plan) { total = plan.size(); };
    cb.on_row = [&](const AbRow& r) {
        std::cerr << "[" << r.a.spec.index + 1 << "/" << total << "] " << r.a.spec.label() << ": "
                  << to_string(r.result.verdict) << " (B/A " << fmt("%.3f", r.result.ratio) << ", "
                  << r.result.pairs << " pairs)" << std::endl;
    };
    cb.on_worker_stderr = [](char side, const std::string& l) {
        std::cerr << "worker " << side << ": " << l << "\n";
    };
    AbReport report;
    try {
        report = controller.run(cb);
    } catch (const WorkerUsageError& e) {
        throw std::invalid_argument(e.what());
    }
    if (!ab.output.empty())
        report.save(ab.output);
    if (ab.json)
        std::cout << json_text(report.to_json(), 1) << "\n";
    else
        std::cout << report.to_text();
    // A regression: a row B runs slower than A, where the code differs.
    std::size_t regressions = 0;
    for (const auto& r : report.rows)
        regressions += r.result.verdict == Verdict::Slower && !r.result.identical_code;
    return ab.fail_on_regression && regressions > 0 ? Failure : Ok;
}

} // namespace

// tune's own options (the run's are ProfileOptions').
struct TuneOptions {
    std::string from;   // an --all-variants report to tune from, instead of a run
    std::string output; // the tuning file (default: the user's, by machine)
    std::string report; // where the run's report goes (default: beside the tuning)
    bool json = false, dry_run = false;
};

int run_tune(ProfileOptions o, const TuneOptions& t) {
    Report report;
    if (!t.from.empty()) {
        try {
            report = Report::load(t.from);
        } catch (const ReportError& e) {
            throw std::invalid_argument("--from: " + std::string(e.what()));
        }
    } else {
        if (!t.dry_run) {
            check_output("-o", t.output);
            check_output("--report", t.report);
        }
        o.all_variants = true; // every cell competes with the chain's pick ...
        o.no_tuning = true;    // ... the chain's own, not an earlier tuning's
        report = measure(o).report;
    }
    const auto w = tune_and_write(report, t.output, t.from.empty() ? t.report : t.from, t.dry_run);
    const auto& decisions = w.result.decisions;
    if (t.json) {
        json list = json::array();
        for (const auto& d : decisions)
            list.push_back({{"op", d.op},
                            {"device", d.device},
                            {"size", d.size},
                            {"pick", d.pick},
                            {"winner", d.winner},
                            {"verdict", std::string(to_string(d.verdict))},
                            {"message", d.message}});
        std::cout << json_text(envelope("tune", {{"file", t.dry_run ? "" : w.file},
                                                 {"report", t.dry_run ? "" : w.report},
                                                 {"tuning", w.written.to_json()},
                                                 {"decisions", list},
                                                 {"notes", w.result.notes}}),
                               1)
                  << "\n";
        return Ok;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : decisions)
        rows.push_back({d.op, d.device, d.size, d.pick,
                        d.winner == d.pick ? std::string("(the pick)") : d.winner,
                        std::string(to_string(d.verdict))});
    std::cout << format_table({"OP", "DEVICE", "SIZE", "CHAIN PICKS", "KEPT", "VERDICT"}, rows)
              << "\n"
              << w.summary(t.dry_run);
    if (w.fresh)
        std::cout << "resolve and profile follow it now (switchyard-cli resolve OP --size SIZE; "
                     "--no-tuning for the chain alone)\n";
    return Ok;
}

Report measure_report(const ProfileOptions& o) {
    return measure(o).report;
}

// The options profile and tune share: what to run, and how long each row may take.
std::vector<const CLI::Option*> add_run_options(CLI::App* cmd, ProfileOptions& options) {
    const auto before = std::as_const(*cmd).get_options();
    ProfileOptions* o = &options;
    // Every numeric option has a range; the limits match what ProfileSettings accepts (a week
    // of seconds, ProfileSettings::max_samples, a seed exact in a JSON number).
    constexpr double week = 7 * 24 * 3600;
    cmd->add_option("--op", o->ops, "Ops to profile (default: all)")->delimiter(',');
    cmd->add_option("--device", o->devices, "Device ids or kinds: cpu, cuda, cuda:0 (default: all)")
        ->delimiter(',');
    cmd->add_option(
           "--sizes", o->sizes,
           "Sizes: N, BxD, MxNxK or a single number (K/M suffixes); OP:SIZE for one op only "
           "(default: a sweep per op)")
        ->delimiter(',');
    cmd->add_option("--cells", o->cells,
                    "Only these cells, as ARCH/VARIANT (x86-64-v4/default) or VARIANT (of "
                    "every arch): each available one that matches, resolved or not; with "
                    "--repeat they alternate pass after pass, an A/B in one run")
        ->delimiter(',');
    cmd->add_option("--variant", o->variant, "The variant resolution asks for")
        ->capture_default_str();
    cmd->add_option("--timeout", o->timeout,
                    "Seconds a row may go without progress before it is killed")
        ->check(number_in(0, true, week, "a finite number of seconds"))
        ->capture_default_str();
    cmd->add_option("--budget", o->budget, "Sampling time budget per row, seconds")
        ->check(number_in(0, false, week, "a finite number of seconds"))
        ->capture_default_str();
    cmd->add_option("--repeat", o->repeat,
                    "Independent runs of every row, pass after pass over the plan so drift "
                    "hits every cell alike; compare tests the variation between them (use "
                    "3 or more where reports will be compared)")
        ->check(integer_in(1, ProfileSettings::kMaxRepeat))
        ->capture_default_str();
    cmd->add_option("--slices", o->slices,
                    "Spend each row's budget in at least this many slices spread over the run, "
                    "pass after pass (the same total budget), so every row carries its "
                    "variation between slices and no verdict rests on one stretch of time (5 by "
                    "default; 1: one stretch a row)")
        ->check(integer_in(1, ProfileSettings::kMaxRepeat))
        ->capture_default_str();
    std::vector<const CLI::Option*> added;
    for (const auto* option : std::as_const(*cmd).get_options())
        if (std::find(before.begin(), before.end(), option) == before.end())
            added.push_back(option);
    return added;
}

// --no-tuning (profile): the resolved cells by the fallback chain alone.
void add_no_tuning_option(CLI::App* cmd, ProfileOptions& o) {
    cmd->add_flag("--no-tuning", o.no_tuning,
                  "Resolve by the fallback chain alone: ignore the tuning files "
                  "(SWITCHYARD_TUNING, ~/.local/share/switchyard/tuning)");
}

namespace {

// The profile command, its options parsed into `o`.
void add_profile_command(CLI::App& app, Context& context, std::shared_ptr<ProfileOptions> o) {
    auto* cmd =
        app.add_subcommand("profile", "Measure kernels (ops x sizes x devices x cells) in a "
                                      "worker process; compare with the CPU reference");
    add_run_options(cmd, *o);
    add_no_tuning_option(cmd, *o);
    cmd->add_flag("--all-variants", o->all_variants,
                  "Every available variant, not only the resolved cell");
    cmd->add_flag("--cold", o->cold, "Evict the caches before every sample");
    auto* j = cmd->add_flag("--json", o->json, "Print the report as JSON at the end");
    auto* jl = cmd->add_flag("--jsonl", o->jsonl,
                             "Stream JSON lines: context, plan, progress, one per row");
    auto* c = cmd->add_flag("--csv", o->csv, "Print the rows as CSV at the end");
    j->excludes(jl)->excludes(c);
    jl->excludes(c);
    cmd->add_option("-o,--output", o->output, "Write the JSON report to this file");
    cmd->add_option("--ceilings-from", o->ceilings_from,
                    "Reuse the CPU ceilings of an earlier report from this machine instead "
                    "of measuring them again (refused when it comes from another machine; "
                    "overrides the cache)");
    cmd->add_flag("--fresh-ceilings", o->fresh_ceilings,
                  "Measure every device's ceilings in this run (the CPU's, OpenCL's, "
                  "CUDA's), and keep them in the cache for the next runs (by default a run "
                  "uses the cached set of this machine, device, core and kernel when it is "
                  "recent enough: --ceilings-max-age; SWITCHYARD_CEILINGS_CACHE=off or a "
                  "folder)");
    cmd->add_option("--ceilings-max-age", o->ceilings_max_age,
                    "Days a cached set of ceilings is used for before a run measures "
                    "them again (default: SWITCHYARD_CEILINGS_MAX_AGE, else " +
                        fmt("%g", kDefaultCeilingsMaxAgeDays) + "; 0: always measure)")
        ->check(number_in(0, false, 36500, "a number of days"));
    // Every numeric option has a range; the limits match what ProfileSettings accepts
    // (a week of seconds, ProfileSettings::max_samples, a seed exact in a JSON number).
    constexpr double week = 7 * 24 * 3600;
    cmd->add_option("--reference-budget", o->reference_budget,
                    "Sampling time for the CPU reference of each (op, size), which every "
                    "row's speedup (xref) is measured against; 0: time it only where the "
                    "plan has it anyway (--all-variants)")
        ->check(number_in(0, false, week, "a finite number of seconds"))
        ->capture_default_str();
    cmd->add_option("--throttle-threshold", o->throttle_threshold,
                    "Drop samples whose effective clock is below this fraction of the row's "
                    "best (0: keep all)")
        ->check(number_in(0, false, 1, "a fraction between 0 and 1"))
        ->capture_default_str();
    cmd->add_option("--max-noise", o->noise, "Stop sampling under this relative noise, percent")
        ->check(number_in(0, false, 100, "a percentage"))
        ->capture_default_str();
    cmd->add_option("--min-samples", o->min_samples, "At least this many samples")
        ->check(integer_in(1, ProfileSettings{}.max_samples))
        ->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "Warm-up seconds per row")
        ->check(number_in(0, false, week, "a finite number of seconds"))
        ->capture_default_str();
    cmd->add_option("--seed", o->seed, "Input seed")
        ->check(integer_in(0, std::int64_t(1) << 53))
        ->capture_default_str();
    set_action(cmd, context, [o] { return run_profile(*o); });
}

} // namespace

ProfileSettings checked_profile_settings(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"profile"};
    argv.insert(argv.end(), args.begin(), args.end());
    CLI::App app{"", "switchyard-cli"};
    Context scratch;
    auto o = std::make_shared<ProfileOptions>();
    add_profile_command(app, scratch, o);
    if (const auto typo = command_line_typo(app, argv); !typo.empty())
        throw std::invalid_argument(typo);
    // The root's parse-complete callback runs after every option is converted and checked
    // and before any subcommand's action: it ends the parse there, so profile never runs.
    struct Checked {};
    app.parse_complete_callback([] { throw Checked{}; });
    std::reverse(argv.begin(), argv.end());
    try {
        app.parse(argv);
        throw std::logic_error("profile settings: the check did not run");
    } catch (const Checked&) {
    } catch (const CLI::CallForHelp&) {
        throw std::invalid_argument("--help is not a profile setting; see switchyard-cli "
                                    "profile --help");
    } catch (const CLI::ParseError& e) {
        throw std::invalid_argument(std::string(e.what()) + "; see switchyard-cli profile --help");
    }
    auto settings = to_settings(*o);
    check_profile_names(settings, default_backends(), false);
    return settings;
}

void add_profile_commands(CLI::App& app, Context& context) {
    add_profile_command(app, context, std::make_shared<ProfileOptions>());
    {
        auto o = std::make_shared<ProfileOptions>();
        o->repeat = 3; // a winner is kept on repeated runs (the regret rule tests their spread)
        auto t = std::make_shared<TuneOptions>();
        auto* cmd = app.add_subcommand(
            "tune", "Measure every variant and keep, per op, device and size range, the cell "
                    "that beats the chain's pick (a tuning file resolve and profile follow)");
        add_run_options(cmd, *o);
        cmd->add_option("--from", t->from,
                        "Tune from this report of a profile --all-variants run instead of "
                        "running one");
        cmd->add_option("-o,--output", t->output,
                        "The tuning file to write (default: the user's, "
                        "~/.local/share/switchyard/tuning/MACHINE_ID.tuning)");
        cmd->add_option("--report", t->report,
                        "Where the run's report goes (default: beside the tuning file)");
        cmd->add_flag("--dry-run", t->dry_run, "Say what would be kept; write nothing");
        cmd->add_flag("--json", t->json, "Machine-readable output");
        set_action(cmd, context, [o, t] { return run_tune(*o, *t); });
    }
    {
        auto o = std::make_shared<ProfileOptions>();
        auto ab = std::make_shared<AbOptions>();
        auto* cmd = app.add_subcommand(
            "ab", "Paired A/B of two builds (or tunings) in one run: one worker a side on the "
                  "same CPU and the same memory, the sides taking turns on each row (A B B A), "
                  "verdicts from the paired ratios");
        add_run_options(cmd, *o);
        cmd->add_flag("--all-variants", o->all_variants,
                      "Every available variant, not only the resolved cell");
        cmd->add_option("--a", ab->a, "Side A's plugin folder (searched first by its worker)");
        cmd->add_option("--b", ab->b, "Side B's plugin folder");
        cmd->add_option("--a-tuning", ab->a_tuning,
                        "Side A follows this tuning file ('none': the fallback chain alone; "
                        "default: the machine's tuning files)");
        cmd->add_option("--b-tuning", ab->b_tuning, "Side B's tuning file, or 'none'");
        cmd->add_option("--pairs", ab->pairs,
                        "Pairs of turns per row: the sides take turns sampling each row, A B B A, "
                        "each turn a pairs-th of the row's budget (at least 2 ms and one sample)")
            ->check(integer_in(PairedComparison::kMinPairs, ProfileSettings::kMaxRepeat))
            ->capture_default_str();
        cmd->add_option("--min-pairs", ab->min_pairs,
                        "A row may stop after this many pairs (an even number) once its 90 % "
                        "interval lies within half the threshold; --pairs or more: every row "
                        "runs all its pairs")
            ->check(integer_in(PairedComparison::kMinPairs, ProfileSettings::kMaxRepeat))
            ->capture_default_str();
        cmd->add_option("--threshold", ab->threshold,
                        "A difference under this many percent is never called")
            ->check(number_in(0, false, 100, "a percentage"))
            ->capture_default_str();
        cmd->add_option("--ceilings-from", o->ceilings_from,
                        "Reuse the CPU ceilings of an earlier report from this machine");
        cmd->add_flag("--json", ab->json, "Print the A/B report as JSON");
        cmd->add_option("-o,--output", ab->output, "Write the A/B report (JSON) to this file");
        cmd->add_flag("--fail-on-regression", ab->fail_on_regression,
                      "Exit 1 when a row of B is SLOWER than A's and their code differs");
        set_action(cmd, context, [o, ab] { return run_ab(*o, *ab); });
    }
    {
        auto as_json = std::make_shared<bool>(false);
        auto no_probe = std::make_shared<bool>(false);
        auto probe_timeout = std::make_shared<double>(InspectOptions{}.probe_timeout_s);
        auto* cmd = app.add_subcommand(
            "hardware", "The CPU, caches, ISA levels and devices of this machine (the devices of "
                        "device-backend plugins are listed and probed in a worker process)");
        cmd->add_flag("--json", *as_json, "Machine-readable output");
        cmd->add_flag("--no-probe", *no_probe,
                      "Skip the bandwidth and FMA probes (peaks stay unknown)");
        add_probe_timeout_option(cmd, *probe_timeout);
        auto load_timeout = std::make_shared<double>(InspectOptions{}.timeout_s);
        add_load_timeout_option(cmd, *load_timeout);
        auto fresh = std::make_shared<bool>(false);
        auto max_age = std::make_shared<std::optional<double>>();
        cmd->add_flag("--fresh-ceilings", *fresh,
                      "Measure every device's ceilings again, and keep them for the next runs "
                      "(by default the cached set of this machine and device is shown, as "
                      "profile uses it)");
        cmd->add_option("--ceilings-max-age", *max_age,
                        "Days a cached set of ceilings is used for before it is measured again "
                        "(default: SWITCHYARD_CEILINGS_MAX_AGE, else " +
                            fmt("%g", kDefaultCeilingsMaxAgeDays) + "; 0: always measure)")
            ->check(number_in(0, false, 36500, "a number of days"));
        set_action(cmd, context, [=] {
            CeilingCachePolicy policy;
            policy.fresh = *fresh;
            policy.max_age_days = *max_age ? **max_age : default_ceilings_max_age_days();
            return run_hardware(*as_json, !*no_probe, *probe_timeout, *load_timeout, policy);
        });
    }
}

} // namespace switchyard::cli

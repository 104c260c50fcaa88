// SPDX-License-Identifier: MIT
#include <switchyard/worker/abcontroller.h>

#include <switchyard/kernels/cpudevice.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/report/runcontext.h>
#include <switchyard/tuning/tunedresolve.h>
#include <switchyard/worker/workercontroller.h>

#include "util/splitmix.h"
#include "worker/workerprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <ctime>
#include <istream>
#include <memory>
#include <random>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace switchyard {

int run_slice_worker(const protocol::ProfileRequest& request, std::istream& commands, int fd,
                     BackendRegistry& backends, DeviceRegistry& devices) {
    try {
        const ProfileSettings& settings = request.settings;
        const auto cpu = find_cpu_device(devices);
        if (cpu && request.peaks)
            cpu->set_peaks(*request.peaks);
        if (cpu && request.shared_buffers) {
            if (fcntl(detail::kWorkerSharedFd, F_GETFD) < 0) {
                detail::emit_line(fd, protocol::fatal_message(
                                          "worker: asked for shared buffers, but descriptor " +
                                          std::to_string(detail::kWorkerSharedFd) +
                                          " is not open (start it through AbController)"));
                return 1;
            }
            cpu->place_in_shared_file(detail::kWorkerSharedFd);
        }
        Profiler profiler(settings, backends, devices);
        profiler.set_parity_once(true); // each row runs 2 x pairs slices of the same code
        if (!request.ceiling_cache.empty())
            profiler.set_ceiling_cache(CeilingCache(request.ceiling_cache), request.ceiling_policy);
        const auto tuning_ignored = follow_tunings(profiler, backends);
        std::vector<RowSpec> plan;
        RunContext context;
        std::optional<CpuPeaks> peaks_now;
        {
            std::int64_t steps = 0;
            const PrepareStepScope heartbeat([&](const std::string& step) {
                detail::emit_line(fd,
                                  protocol::progress_message(-1, "preparing: " + step, ++steps));
            });
            try {
                announce_prepare_step("planning");
                plan = profiler.plan();
            } catch (const std::invalid_argument& e) {
                detail::emit_line(fd, protocol::fatal_message(e.what(), true));
                return 2;
            }
            context = run_context(profiler);
            for (const auto& why : *tuning_ignored)
                context.warnings.push_back("tuning ignored: " + why);
            peaks_now = profiler.cpu_peaks();
        }
        detail::emit_line(fd,
                          protocol::context_message(&context, peaks_now ? &*peaks_now : nullptr));
        detail::emit_line(fd, protocol::plan_message(plan));
        std::string line;
        while (std::getline(commands, line)) {
            if (line.empty())
                continue;
            protocol::SliceCommand c;
            try {
                c = protocol::slice_command_from_json(nlohmann::json::parse(line));
                if (c.index >= std::int64_t(plan.size()))
                    throw std::runtime_error("slice.index: row " + std::to_string(c.index) +
                                             " is past the plan's " + std::to_string(plan.size()));
            } catch (const std::exception& e) {
                detail::emit_line(fd, protocol::fatal_message(
                                          std::string("worker: bad command: ") + e.what(), true));
                return 2;
            }
            profiler.use_settings(settings.paired_slice_settings(c.slices, c.first));
            if (cpu)
                cpu->vary_placement(std::uint64_t(c.placement));
            const auto i = c.index;
            detail::emit_line(fd, protocol::row_start_message(i));
            const auto row = profiler.run_row(
                plan[std::size_t(i)], [&](const std::string& phase, std::int64_t n) {
                    detail::emit_line(fd, protocol::progress_message(i, phase, n));
                });
            detail::emit_line(fd, protocol::row_message(row));
        }
        detail::emit_line(fd, protocol::done_message());
        return 0;
    } catch (const std::exception& e) {
        detail::emit_line(fd, protocol::fatal_message(std::string("worker: ") + e.what()));
        return 1;
    }
}

// One side's worker: started, told slices one at a time, started again after it dies.
struct AbController::Side {
    char name = 'A';
    AbSide side;
    const Options& options;
    std::atomic<bool>& cancel;
    std::atomic<int>& pid;
    const Callbacks& cb;
    int shared_fd = -1; // the memory file both sides cut their CPU buffers from; -1: none

    std::unique_ptr<detail::WorkerProcess> process;
    std::optional<RunContext> context; // of its first worker
    std::optional<CpuPeaks> peaks;     // what its first worker sent
    std::vector<RowSpec> plan;
    bool have_plan = false;
    std::optional<ProfileRow> reply;
    std::string fatal, err_tail, phase;
    bool fatal_usage = false;

    Side(char n, AbSide s, const Options& o, std::atomic<bool>& c, std::atomic<int>& p,
         const Callbacks& callbacks)
        : name(n), side(std::move(s)), options(o), cancel(c), pid(p), cb(callbacks) {}

    std::string who() const { return std::string("side ") + name + " (" + side.describe() + ")"; }

    void on_line(const std::string& line) {
        if (line.empty())
            return;
        try {
            const auto m = protocol::parse(nlohmann::json::parse(line));
            if (!m)
                return;
            using protocol::Event;
            switch (m->event) {
            case Event::Context:
                if (m->context && !context)
                    context = m->context;
                if (m->peaks && !peaks)
                    peaks = m->peaks;
                break;
            case Event::Plan:
                if (!have_plan) {
                    plan = m->plan;
                    have_plan = true;
                }
                break;
            case Event::Progress:
                phase = m->phase;
                break;
            case Event::Row:
                reply = m->row;
                break;
            case Event::Fatal:
                fatal = m->message;
                fatal_usage = m->usage;
                break;
            default:
                break;
            }
        } catch (const std::exception& e) {
            if (cb.on_worker_stderr)
                cb.on_worker_stderr(name, std::string("(bad worker message) ") + e.what());
        }
    }
    void on_err(const std::string& line) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr(name, line);
        err_tail += line + "\n";
        if (err_tail.size() > 2048)
            err_tail.erase(0, err_tail.size() - 2048);
    }
    detail::WorkerEnd wait(double limit_s, const std::function<bool()>& until) {
        return process->run([limit_s] { return limit_s; },
                            [this](const std::string& l) { on_line(l); },
                            [this](const std::string& l) { on_err(l); }, cancel, until);
    }

    // Starts the worker and waits for its plan. Throws WorkerError (WorkerUsageError for
    // bad settings) when it cannot get that far.
    void start(const std::optional<CpuPeaks>& given) {
        std::vector<std::pair<std::string, std::string>> env = options.environment;
        if (!side.plugin_dir.empty())
            env.emplace_back("SWITCHYARD_PLUGIN_PATH", side.plugin_dir);
        if (!side.tuning.empty() && side.tuning != AbSide::kNoTuning)
            env.emplace_back("SWITCHYARD_TUNING", side.tuning);
        protocol::ProfileRequest request;
        request.settings = options.settings;
        // No memory beside the DRAM rows: it says what the machine's memory did around one
        // profile's samples, not which side is faster, and its probe's working set cost each
        // side's first slice of a DRAM row over a second (a fifth of an A/B run's time).
        request.settings.memory_beside = false;
        // Row i of one side is paired with row i of the other: a tuning that picked the CPU
        // reference must not fold its row into the reference row.
        request.settings.resolved_apart = true;
        request.settings.use_tuning =
            options.settings.use_tuning && side.tuning != AbSide::kNoTuning;
        request.peaks = given;
        request.shared_buffers = shared_fd >= 0;
        if (options.ceiling_cache) { // the devices' figures, kept between runs
            request.ceiling_cache = options.ceiling_cache->folder();
            request.ceiling_policy = options.ceiling_policy;
        }
        process = std::make_unique<detail::WorkerProcess>(
            std::vector<std::string>{options.executable, "__worker", "slices"},
            detail::worker_environment(env), protocol::to_json(request).dump() + "\n", true,
            shared_fd);
        pid = process->pid();
        have_plan = false;
        fatal.clear();
        err_tail.clear();
        phase.clear();
        const double silence = std::max(options.settings.row_timeout_s, options.startup_timeout_s);
        const auto end = wait(silence, [this] { return have_plan || !fatal.empty(); });
        if (!fatal.empty()) {
            stop();
            if (fatal_usage)
                throw WorkerUsageError(who() + ": " + fatal);
            throw WorkerError(who() + ": " + fatal);
        }
        if (!end.paused) {
            process.reset();
            pid = 0;
            if (cancel)
                return;
            throw WorkerError(
                who() + ": its worker failed before planning (" +
                (end.timed_out ? "silent too long" : describe_wait_status(end.status)) +
                (phase.empty() ? "" : ", at " + phase) + ")" +
                (err_tail.empty() ? "" : "; worker stderr: " + err_tail));
        }
    }
    void stop() {
        if (!process)
            return;
        process->close_input();
        process->run([] { return 5.0; }, [this](const std::string& l) { on_line(l); },
                     [this](const std::string& l) { on_err(l); }, cancel);
        process.reset();
        pid = 0;
    }

    // One slice of `spec`; a worker that dies or hangs in it gives a crashed or timed-out row
    // and is started again on the next call.
    ProfileRow slice(const RowSpec& spec, std::int64_t slices, bool first, std::int64_t placement,
                     const std::optional<CpuPeaks>& run_peaks) {
        if (!process)
            start(run_peaks);
        ProfileRow failed;
        failed.spec = spec;
        if (!process) { // cancelled
            failed.status = RowStatus::Error;
            failed.reason = "cancelled";
            return failed;
        }
        reply.reset();
        phase.clear();
        const std::string command =
            protocol::to_json(protocol::SliceCommand{spec.index, slices, first, placement}).dump() +
            "\n";
        if (process->send(command)) {
            const auto end = wait(options.settings.row_timeout_s,
                                  [this] { return reply.has_value() || !fatal.empty(); });
            if (end.paused && reply)
                return *reply;
            if (!end.paused) {
                failed.status = end.timed_out ? RowStatus::TimedOut : RowStatus::Crashed;
                failed.reason = end.timed_out
                                    ? who() + ": no progress for " +
                                          std::to_string(options.settings.row_timeout_s) +
                                          " s (phase: " + (phase.empty() ? "start" : phase) +
                                          "); the worker was killed"
                                    : who() + ": the worker died with " +
                                          describe_wait_status(end.status) +
                                          " (phase: " + (phase.empty() ? "start" : phase) + ")" +
                                          (err_tail.empty() ? "" : "; worker stderr: " + err_tail);
                process.reset();
                pid = 0;
                return failed;
            }
        }
        failed.status = RowStatus::Crashed;
        failed.reason = who() + ": " + (fatal.empty() ? "its worker took no command" : fatal);
        process.reset();
        pid = 0;
        return failed;
    }
};

AbController::AbController(Options options) : m_options(std::move(options)) {}

void AbController::cancel() noexcept {
    m_cancel = true;
    detail::WorkerProcess::stop(m_pid_a.load());
    detail::WorkerProcess::stop(m_pid_b.load());
}

AbReport AbController::run(const Callbacks& cb) {
    if (m_options.pairs < 1)
        throw WorkerUsageError("pairs: expected at least 1");
    // The CPU ceilings both sides share: given, cached, or measured by side A's worker.
    CeilingSetChoice ceilings;
    if (m_options.cpu_peaks) {
        ceilings.peaks = m_options.cpu_peaks;
        ceilings.set = m_options.ceiling_set.is_null()
                           ? nlohmann::json{{"source", "given"},
                                            {"id", fingerprint_id(m_options.cpu_peaks->to_json())}}
                           : m_options.ceiling_set;
    } else if (m_options.ceiling_cache) {
        ceilings = m_options.ceiling_cache->choose(m_options.ceiling_policy,
                                                   std::int64_t(std::time(nullptr)));
    } else {
        ceilings = uncached_ceiling_choice("no cache of ceilings in use");
    }
    // Each pair's CPU buffers at offsets drawn afresh (CpuDevice::vary_placement), the same
    // for both of its slices: where a row's arrays sit within their pages (4 KiB aliasing,
    // cache sets) moved one worker's small rows 2-5 % from the other's, for the whole run, and
    // a paired test reads a gap that steady as a difference. And on the same physical pages:
    // both sides cut their buffers from one memory file (CpuDevice::place_in_shared_file), so
    // the host's pages under them, which set a row's mode on a virtual machine, are the pair's
    // too. SWITCHYARD_PLACEMENT=apart: drawn offsets, each side on pages of its own; fixed:
    // where each worker's heap puts them (to see what placement does to a row).
    const char* placement_env = std::getenv("SWITCHYARD_PLACEMENT");
    const std::string_view placement_mode = placement_env ? placement_env : "";
    const bool fixed_placement = placement_mode == "fixed";
    const bool apart = fixed_placement || placement_mode == "apart";
    if (!placement_mode.empty() && !apart && placement_mode != "shared")
        throw WorkerUsageError("SWITCHYARD_PLACEMENT is '" + std::string(placement_mode) +
                               "': expected shared (the default), apart or fixed");
    struct FileCloser {
        int fd = -1;
        ~FileCloser() {
            if (fd >= 0)
                ::close(fd);
        }
    } shared_file;
    if (!apart) {
        shared_file.fd = memfd_create("switchyard-ab-buffers", MFD_CLOEXEC);
        if (shared_file.fd < 0)
            throw WorkerError(std::string("cannot create the sides' shared buffer file "
                                          "(memfd_create): ") +
                              std::strerror(errno) + "; SWITCHYARD_PLACEMENT=apart runs without");
    }
    Side a('A', m_options.a, m_options, m_cancel, m_pid_a, cb);
    Side b('B', m_options.b, m_options, m_cancel, m_pid_b, cb);
    a.shared_fd = b.shared_fd = shared_file.fd;
    AbReport report;
    report.a = m_options.a;
    report.b = m_options.b;
    report.pairs = m_options.pairs;
    report.min_pairs = m_options.min_pairs < m_options.pairs ? m_options.min_pairs : 0;
    report.options = m_options.compare;
    a.start(ceilings.peaks);
    if (m_cancel)
        return report;
    std::optional<CpuPeaks> peaks = ceilings.peaks ? ceilings.peaks : a.peaks;
    if (!ceilings.peaks && peaks && ceilings.store && m_options.ceiling_cache) {
        try {
            m_options.ceiling_cache->record(ceilings, *peaks, std::int64_t(std::time(nullptr)));
        } catch (const std::exception& e) {
            ceilings.set["store_error"] = std::string("side A's ceilings: ") + e.what();
        }
    }
    b.start(peaks);
    if (m_cancel)
        return report;
    // The sides must plan the same rows (op, size, device, in order); their cells may differ
    // (a tuning picks another).
    const auto& plan = a.plan;
    bool same = a.plan.size() == b.plan.size();
    for (std::size_t i = 0; same && i < plan.size(); ++i)
        same = a.plan[i].op == b.plan[i].op && a.plan[i].size == b.plan[i].size &&
               a.plan[i].device == b.plan[i].device;
    if (!same) {
        a.stop();
        b.stop();
        throw WorkerUsageError(
            "the two sides planned different rows (A " + std::to_string(a.plan.size()) +
            " rows, B " + std::to_string(b.plan.size()) +
            "): each side must have the cells the selection names; select them with --op, "
            "--device and --cells so both sides have them");
    }
    if (a.context) {
        report.context = *a.context;
        report.context.ceiling_set = ceilings.set;
        report.context.settings = m_options.settings;
    }
    if (b.context) {
        report.context_b = *b.context;
        report.context_b.ceiling_set = ceilings.set;
        report.context_b.settings = m_options.settings;
    }
    if (cb.on_plan)
        cb.on_plan(plan);
    const auto pairs = m_options.pairs;
    if (fixed_placement)
        report.context.warnings.push_back(
            "SWITCHYARD_PLACEMENT=fixed: each side's CPU buffers sat where its worker's heap "
            "put them, so a placement one side kept is in its times");
    else if (apart)
        report.context.warnings.push_back(
            "SWITCHYARD_PLACEMENT=apart: each side's CPU buffers sat on pages of its own, so "
            "the pages' own speed is in each pair's ratio");
    std::uint64_t placement_state = std::random_device{}();
    placement_state = (placement_state << 32) ^ std::uint64_t(std::time(nullptr));
    std::vector<PairedComparison> measured; // each finished row's own figures
    for (std::size_t i = 0; i < plan.size() && !m_cancel; ++i) {
        std::vector<ProfileRow> runs_a, runs_b;
        AbRow row;
        bool broken = false;
        for (std::int64_t k = 0; k < pairs && !m_cancel && !broken; ++k) {
            ProfileRow got[2];
            const std::int64_t placement =
                fixed_placement ? 0 : std::int64_t((splitmix64(placement_state) >> 11) | 1);
            // A B, then B A: each side goes first in every other pair.
            for (int turn = 0; turn < 2; ++turn) {
                const bool a_turn = (k % 2 == 0) == (turn == 0);
                Side& s = a_turn ? a : b;
                if (cb.on_slice)
                    cb.on_slice(std::int64_t(i), s.name, k);
                got[a_turn ? 0 : 1] = s.slice(s.plan[i], pairs, k == 0, placement, peaks);
            }
            runs_a.push_back(got[0]);
            runs_b.push_back(got[1]);
            if (got[0].measured() && got[1].measured() && got[0].stats.median > 0 &&
                got[1].stats.median > 0)
                row.log_ratios.push_back(std::log(got[1].stats.median / got[0].stats.median));
            // A slice that crashed or hung: the row's other pairs would only repeat it.
            broken = got[0].status == RowStatus::Crashed || got[0].status == RowStatus::TimedOut ||
                     got[1].status == RowStatus::Crashed || got[1].status == RowStatus::TimedOut;
            // Settled SAME after an even number of pairs: the rest would cost, not decide.
            if (!broken && (k + 1) % 2 == 0 && k + 1 < pairs &&
                std::int64_t(row.log_ratios.size()) >= m_options.min_pairs &&
                settled_same(row.log_ratios, m_options.compare.min_effect))
                break;
        }
        if (runs_a.empty())
            break;
        row.a = merge_runs(std::move(runs_a), m_options.settings.keep_samples);
        row.b = merge_runs(std::move(runs_b), m_options.settings.keep_samples);
        // Judged for the progress with the rows so far, as report.judge() judges them all
        // (identical code MACHINE, the machine gap of the identical rows so far, the
        // false-discovery control over those rows): a run once printed SLOWER 1.158 for the
        // CPU reference, then MACHINE in its report. Each row is measured once.
        measured.push_back(measure_paired(row.log_ratios, row.identical_code()));
        {
            auto so_far = measured;
            decide_paired(so_far, m_options.compare);
            row.result = so_far.back();
        }
        if (cb.on_row)
            cb.on_row(row);
        report.rows.push_back(std::move(row));
    }
    a.stop();
    b.stop();
    // Each side's speedups over its own reference rows.
    for (const bool side_a : {true, false}) {
        std::vector<ProfileRow> rows;
        for (const auto& r : report.rows)
            rows.push_back(side_a ? r.a : r.b);
        apply_reference_speedups(rows);
        for (std::size_t i = 0; i < rows.size(); ++i)
            (side_a ? report.rows[i].a : report.rows[i].b).reference_speedup =
                rows[i].reference_speedup;
    }
    // The run's rule over every row (report.judge() without measuring the rows again).
    decide_paired(measured, m_options.compare);
    for (std::size_t i = 0; i < report.rows.size(); ++i)
        report.rows[i].result = measured[i];
    return report;
}

} // namespace switchyard

// SPDX-License-Identifier: MIT
#include <switchyard/worker/workercontroller.h>

#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/driftcontrol.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/tuning/tunedresolve.h>
#include <switchyard/worker/protocol.h>

#include "worker/workerprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <utility>

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

} // namespace

std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* abbrev = sigabbrev_np(sig);
        const char* text = strsignal(sig);
        return "signal " + std::to_string(sig) + " (" +
               (abbrev ? "SIG" + std::string(abbrev) : std::string("?")) +
               (text ? ": " + std::string(text) : std::string()) + ")";
    }
    if (WIFEXITED(status))
        return "exit code " + std::to_string(WEXITSTATUS(status));
    return "status " + std::to_string(status);
}

WorkerController::WorkerController(Options options) : m_options(std::move(options)) {}

void WorkerController::cancel() noexcept {
    m_cancel = true;
    const int pid = m_pid.load();
    detail::WorkerProcess::stop(pid); // its keeper ends it and whatever it started
}

// --- bookkeeping: the plan, the rows, where the next worker starts ---

struct WorkerController::RunState {
    ProfileSettings settings; // the run's; a worker makes each pass's share (pass_settings)
    std::int64_t passes = 1;  // settings.passes()
    Report report;
    std::vector<RowSpec> plan;
    bool have_plan = false;
    std::map<std::int64_t, std::vector<ProfileRow>> runs; // plan index -> its runs so far
    std::map<std::int64_t, ProfileRow> finished;          // merged, once its last run came
    std::int64_t pass = 0, start = 0; // where the next worker starts: this pass, this row
    std::optional<CpuPeaks> peaks;    // the run's CPU ceilings, for every worker after the first
    std::vector<std::int64_t> skip;   // rows a worker died in (crashed, hung): not run again
    std::int64_t last_failed_start = -1;
    bool has_context = false; // the first worker's context arrived
    DriftControl control;     // the sentinel: here at the start and end, between passes there
    Clock::time_point started = Clock::now();
};

// What one worker process did before it ended.
struct WorkerController::Attempt {
    std::int64_t current = -1; // the row in progress
    std::int64_t pass = 0;     // of the pass in progress
    std::string phase;
    bool done = false, timed_out = false;
    std::string fatal;
    bool fatal_usage = false;
    std::string err_tail; // the last ~2 KiB of its stderr
    int status = 0;
    const char* containment = nullptr; // how its descendants were contained
};

namespace {

std::string phase_or_start(const std::string& phase) {
    return phase.empty() ? "start" : phase;
}

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

void WorkerController::apply(const protocol::Message& m, RunState& state, Attempt& attempt,
                             const Callbacks& cb) {
    using protocol::Event;
    switch (m.event) {
    case Event::Context:
        if (m.context && !state.has_context) {
            state.has_context = true;
            state.report.context = *m.context;
            if (attempt.containment)
                state.report.context.containment = attempt.containment;
            record_ceilings(state.report.context, m.peaks ? &*m.peaks : nullptr);
            if (cb.on_context)
                cb.on_context(state.report.context);
        }
        if (m.peaks && !state.peaks)
            state.peaks = m.peaks;
        break;
    case Event::Plan:
        if (!state.have_plan) {
            state.plan = m.plan;
            state.have_plan = true;
            if (cb.on_plan)
                cb.on_plan(state.plan);
        }
        break;
    case Event::RowStart:
        attempt.current = m.index;
        attempt.pass = m.pass;
        attempt.phase = "start";
        if (cb.on_row_start && m.index < std::int64_t(state.plan.size()))
            cb.on_row_start(state.plan[std::size_t(m.index)]);
        break;
    case Event::Progress:
        attempt.phase = m.phase;
        if (cb.on_progress)
            cb.on_progress(m.index, m.phase, m.samples);
        break;
    case Event::Row:
        attempt.current = -1;
        state.pass = m.pass;
        state.start = m.row.spec.index + 1;
        add_run(state, m.pass, m.row, cb);
        break;
    case Event::Control:
        state.control.samples.push_back({m.phase, seconds_since(state.started), m.median});
        break;
    case Event::Done:
        attempt.done = true;
        break;
    case Event::Fatal:
        attempt.fatal = m.message;
        attempt.fatal_usage = m.usage;
        break;
    }
}

// One run of a row: in the run's last pass, the row is merged with its earlier runs and
// reported at once (merge_runs()); a run of one pass reports it as it came.
void WorkerController::add_run(RunState& state, std::int64_t pass, ProfileRow row,
                               const Callbacks& cb) const {
    const auto index = row.spec.index;
    if (state.passes == 1) {
        state.finished[index] = std::move(row);
    } else {
        auto& runs = state.runs[index];
        runs.push_back(std::move(row));
        if (pass + 1 < state.passes)
            return;
        state.finished[index] = merge_runs(std::move(runs), m_options.settings.keep_samples);
        state.runs.erase(index);
    }
    if (cb.on_row)
        cb.on_row(state.finished[index]);
}

void WorkerController::handle_line(const std::string& line, RunState& state, Attempt& attempt,
                                   const Callbacks& cb) {
    if (line.empty())
        return;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (...) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr("(unparsable worker output) " + line.substr(0, 200));
        return;
    }
    try {
        if (const auto m = protocol::parse(j))
            apply(*m, state, attempt, cb);
    } catch (const std::exception& e) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr(std::string("(bad worker message) ") + e.what());
    }
}

std::string WorkerController::worker_input(const RunState& state) const {
    protocol::ProfileRequest request;
    request.settings = state.settings;
    request.start = state.start;
    request.pass = state.pass;
    request.peaks = state.peaks;
    request.skip = state.skip;
    if (m_options.ceiling_cache) {
        request.ceiling_cache = m_options.ceiling_cache->folder();
        request.ceiling_policy = m_options.ceiling_policy;
    }
    return protocol::to_json(request).dump();
}

// The silence allowed outside rows (each preparation step, planning, between rows).
double WorkerController::startup_silence_s() const {
    return std::max(m_options.settings.row_timeout_s, m_options.startup_timeout_s);
}

WorkerController::Attempt WorkerController::run_one_worker(RunState& state,
                                                           const std::vector<std::string>& env,
                                                           const Callbacks& cb) {
    std::vector<std::string> argv = {m_options.executable};
    argv.insert(argv.end(), m_options.worker_args.begin(), m_options.worker_args.end());
    detail::WorkerProcess worker(argv, env, worker_input(state));
    m_pid = worker.pid();
    Attempt attempt;
    attempt.containment = containment_name(worker.containment());
    const double row_timeout = m_options.settings.row_timeout_s;
    const auto limit = [&] {
        if (attempt.done)
            return 5.0; // done: it only has to exit
        return attempt.current >= 0 ? row_timeout : startup_silence_s();
    };
    const auto end = worker.run(
        limit, [&](const std::string& line) { handle_line(line, state, attempt, cb); },
        [&](const std::string& line) {
            if (cb.on_worker_stderr)
                cb.on_worker_stderr(line);
            attempt.err_tail += line + "\n";
            if (attempt.err_tail.size() > 2048)
                attempt.err_tail.erase(0, attempt.err_tail.size() - 2048);
        },
        m_cancel);
    m_pid = 0;
    attempt.timed_out = end.timed_out && !attempt.done;
    attempt.status = end.status;
    return attempt;
}

// The row a worker that died or hung takes with it: crashed or timed_out.
ProfileRow WorkerController::failed_row(const RowSpec& spec, const Attempt& attempt) const {
    ProfileRow row;
    row.spec = spec;
    row.status = attempt.timed_out ? RowStatus::TimedOut : RowStatus::Crashed;
    if (attempt.timed_out) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", m_options.settings.row_timeout_s);
        row.reason = std::string("no progress for ") + secs +
                     " s (phase: " + phase_or_start(attempt.phase) + "); the worker was killed";
    } else {
        const std::string tail =
            attempt.err_tail.empty() ? std::string() : "; worker stderr: " + attempt.err_tail;
        row.reason = "the worker died with " + describe_wait_status(attempt.status) +
                     " (phase: " + phase_or_start(attempt.phase) + ")" + tail;
    }
    return row;
}

// After a worker ended without "done": blame its row, move on. False when no row is left.
bool WorkerController::recover(RunState& state, const Attempt& attempt, const Callbacks& cb) const {
    if (!state.have_plan) {
        const std::string tail =
            attempt.err_tail.empty() ? std::string() : "; worker stderr: " + attempt.err_tail;
        const std::string step = attempt.phase.empty() ? std::string() : ", at " + attempt.phase;
        char silence[64];
        std::snprintf(silence, sizeof silence, "no output for %g s", startup_silence_s());
        throw WorkerError(
            "the profiling worker failed before planning (" +
            (attempt.timed_out ? std::string(silence) : describe_wait_status(attempt.status)) +
            step + ")" + tail);
    }
    const auto n = std::int64_t(state.plan.size());
    // Where the next worker starts, as one position over all passes.
    const auto normalize = [&] {
        if (state.start >= n && state.pass + 1 < state.passes) {
            ++state.pass;
            state.start = 0;
        }
    };
    normalize();
    std::int64_t victim = attempt.current, pass = attempt.pass;
    if (victim < 0) {
        // Died between rows: blame the next row only if a fresh worker already failed there.
        const std::int64_t at = state.pass * (n + 1) + state.start;
        if (state.last_failed_start == at) {
            victim = state.start;
            pass = state.pass;
        }
        state.last_failed_start = at;
    }
    if (victim >= 0 && victim < n) {
        // A row a worker died in is not run again in a later pass: a hang would cost its
        // timeout each time.
        state.skip.push_back(victim);
        add_run(state, pass, failed_row(state.plan[std::size_t(victim)], attempt), cb);
        state.pass = pass;
        state.start = victim + 1;
        normalize();
    }
    return state.start < n;
}

Report WorkerController::run_pass(RunState& state, const std::vector<std::string>& env,
                                  const Callbacks& cb) {
    while (!m_cancel) {
        const Attempt attempt = run_one_worker(state, env, cb);
        if (m_cancel)
            break;
        if (!attempt.fatal.empty()) {
            if (attempt.fatal_usage)
                throw WorkerUsageError(attempt.fatal);
            throw WorkerError(attempt.fatal);
        }
        if (attempt.done || !recover(state, attempt, cb))
            break;
    }
    for (auto& [i, row] : state.finished)
        state.report.rows.push_back(std::move(row));
    return std::move(state.report);
}

void WorkerController::record_ceilings(RunContext& context, const CpuPeaks* peaks) {
    if (m_ceilings.store && m_options.ceiling_cache) {
        // What the worker measured: the peaks beside its context, else the context's own.
        try {
            const CpuPeaks* measured = peaks               ? peaks
                                       : context.cpu_peaks ? &*context.cpu_peaks
                                                           : nullptr;
            if (!measured)
                throw std::runtime_error("the worker sent no CPU ceilings");
            m_options.ceiling_cache->record(m_ceilings, *measured,
                                            std::int64_t(std::time(nullptr)));
        } catch (const std::exception& e) {
            m_ceilings.store = false;
            m_ceilings.set["store_error"] = std::string("the worker's ceilings: ") + e.what();
        }
    }
    if (!m_ceilings.set.is_null())
        context.ceiling_set = m_ceilings.set;
}

Report WorkerController::run(const Callbacks& cb) {
    const auto env = detail::worker_environment(m_options.environment);
    const std::int64_t passes = m_options.settings.passes();
    // The CPU ceilings every worker of the run shares: given, cached, or measured by the
    // first worker (and then kept in the cache).
    if (m_options.cpu_peaks) {
        m_ceilings = CeilingSetChoice{};
        m_ceilings.peaks = m_options.cpu_peaks;
        m_ceilings.set =
            m_options.ceiling_set.is_null()
                ? nlohmann::json{{"source", "given"},
                                 {"id", fingerprint_id(m_options.cpu_peaks->to_json())}}
                : m_options.ceiling_set;
    } else if (m_options.ceiling_cache) {
        m_ceilings = m_options.ceiling_cache->choose(m_options.ceiling_policy,
                                                     std::int64_t(std::time(nullptr)));
    } else {
        m_ceilings = uncached_ceiling_choice("no cache of ceilings in use");
    }
    // One worker makes every pass of the run (slices, --repeat N), pass after pass, each
    // with its share of every row's budget (ProfileSettings::pass_settings), so what drifts
    // (the load of the neighbours, the clock, the memory placement) hits every cell alike and
    // every row has runs spread over the run; a row is reported once, its runs merged. Only
    // a worker that died or hung is replaced: the next one starts after its row.
    RunState state;
    state.settings = m_options.settings;
    state.passes = passes;
    state.peaks = m_ceilings.peaks;
    // The drift control: the sentinel here at the start and at the end (no worker runs then),
    // and by the worker between its passes (no row runs then), so the report says how the
    // machine moved.
    const auto measure_control = [&](std::string when) {
        if (!m_cancel)
            state.control.samples.push_back(
                {std::move(when), seconds_since(state.started), measure_sentinel()});
    };
    measure_control("start");
    Report report = run_pass(state, env, cb);
    measure_control("end");
    if (passes > 1) {
        // Rows whose last pass was not reached (a cancelled run, a row a worker died in) are
        // merged from the runs they have.
        std::map<std::int64_t, ProfileRow> late;
        for (auto& [index, rows] : state.runs)
            if (!rows.empty()) {
                late[index] = merge_runs(std::move(rows), m_options.settings.keep_samples);
                if (cb.on_row && !m_cancel)
                    cb.on_row(late[index]);
            }
        for (auto& [index, row] : late)
            report.rows.push_back(std::move(row));
        std::stable_sort(
            report.rows.begin(), report.rows.end(),
            [](const ProfileRow& x, const ProfileRow& y) { return x.spec.index < y.spec.index; });
        report.context.repeat = int(passes);
    }
    report.context.control = std::move(state.control);
    report.context.settings = m_options.settings; // the run's, not a pass's share
    report.annotate();
    return report;
}

CpuPeaks reusable_cpu_peaks(const Report& earlier, const std::string& origin) {
    const auto& ctx = earlier.context;
    if (!ctx.cpu_peaks) {
        // Present but unreadable, or absent: the decoder said which.
        for (const auto& w : ctx.read_warnings)
            if (w.rfind("context.cpu_peaks", 0) == 0)
                throw ReportError(origin + ": " + w);
        throw ReportError(origin + ": has no CPU ceilings (context.cpu_peaks) to reuse");
    }
    // Ceilings belong to one machine: its CPU, and its memory and load around the CPU.
    const auto& cpu = cpu_info();
    const std::pair<std::string, std::string> checks[] = {
        {ctx.host.hostname, host_info().hostname},
        {ctx.cpu.brand, cpu.brand},
        {std::to_string(ctx.cpu.logical_cpus), std::to_string(cpu.logical_cpus)},
    };
    const char* names[] = {"host", "CPU", "logical CPUs"};
    for (std::size_t i = 0; i < std::size(checks); ++i)
        if (checks[i].first != checks[i].second)
            throw ReportError(origin + ": its ceilings were measured on another machine (" +
                              names[i] + " '" + checks[i].first + "', here '" + checks[i].second +
                              "'); measure them in this run instead");
    // And to one ISA level: a run capped below it (--max-isa) judges its rows against what a
    // machine of the capped level measures, probes it could not run otherwise.
    const auto& level = ctx.cpu.best_level; // empty in reports older than the cap
    if (!level.empty() && level != cpu.best_level)
        throw ReportError(origin + ": its ceilings were measured at ISA level '" + level +
                          "', and this run's is '" + cpu.best_level +
                          "' (--max-isa, SWITCHYARD_MAX_ISA); measure them in this run instead, "
                          "or give this run the cap that one had");
    return *ctx.cpu_peaks;
}

int run_profile_worker(const protocol::ProfileRequest& request, int fd, BackendRegistry& backends,
                       DeviceRegistry& devices) {
    const ProfileSettings& settings = request.settings;
    const std::int64_t start = request.start;
    const std::vector<std::int64_t>& skip = request.skip;
    try {
        if (const auto cpu = find_cpu_device(devices); cpu && request.peaks)
            cpu->set_peaks(*request.peaks);
        // Before the plan: one heartbeat per step (index -1), so a loaded machine that takes
        // minutes over its probes is not taken for a hung worker, and a hang names its step.
        // Inside a row, the row's own progress messages are the heartbeat.
        Profiler profiler(settings, backends, devices);
        if (!request.ceiling_cache.empty())
            profiler.set_ceiling_cache(CeilingCache(request.ceiling_cache), request.ceiling_policy);
        const auto tuning_ignored = follow_tunings(profiler, backends);
        std::vector<RowSpec> plan;
        std::optional<RunContext> context;
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
            if (start == 0 && request.pass == 0) {
                context = run_context(profiler);
                for (const auto& why : *tuning_ignored)
                    context->warnings.push_back("tuning ignored: " + why);
            }
            peaks_now = profiler.cpu_peaks();
        }
        detail::emit_line(fd, protocol::context_message(context ? &*context : nullptr,
                                                        peaks_now ? &*peaks_now : nullptr));
        detail::emit_line(fd, protocol::plan_message(plan));
        // Every pass of the run from the request's on (ProfileSettings::passes()), each with
        // its share of the budget. A row's later slices keep its first slice's parity (no
        // checking launch; the guard zones are still read) and batch size; between two
        // passes the drift control is timed here, where no row runs.
        const std::int64_t passes = settings.passes();
        if (passes > 1)
            profiler.set_parity_once(true);
        for (std::int64_t pass = request.pass; pass < passes; ++pass) {
            if (passes > 1)
                profiler.use_settings(settings.pass_settings(pass));
            const std::int64_t first = pass == request.pass ? std::max<std::int64_t>(0, start) : 0;
            for (std::int64_t i = first; i < std::int64_t(plan.size()); ++i) {
                if (std::find(skip.begin(), skip.end(), i) != skip.end())
                    continue;
                detail::emit_line(fd, protocol::row_start_message(i, pass));
                const auto row = profiler.run_row(
                    plan[std::size_t(i)], [&](const std::string& phase, std::int64_t n) {
                        detail::emit_line(fd, protocol::progress_message(i, phase, n));
                    });
                detail::emit_line(fd, protocol::row_message(row, pass));
            }
            if (pass + 1 < passes)
                detail::emit_line(
                    fd, protocol::control_message("after pass " + std::to_string(pass + 1),
                                                  measure_sentinel()));
        }
        detail::emit_line(fd, protocol::done_message());
        return 0;
    } catch (const std::exception& e) {
        detail::emit_line(fd, protocol::fatal_message(std::string("worker: ") + e.what()));
        return 1;
    }
}

} // namespace switchyard

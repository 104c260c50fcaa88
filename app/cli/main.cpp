// SPDX-License-Identifier: MIT
// switchyard-cli: the headless face of Switchyard (and its profiling worker).
#include "cmd_doctor.h"
#include "cmd_fleet.h"
#include "cmd_profile.h"
#include "command.h"
#include "versiontext.h"

#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/sdk/version.h>
#include <switchyard/worker/workercontroller.h>

#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

namespace {

// Ctrl-C or a TERM: the workers' process groups go first (a worker never outlives the run),
// then the default action, so the exit status still says which signal it was.
extern "C" void on_terminating_signal(int sig) {
    switchyard::kill_live_workers();
    signal(sig, SIG_DFL);
    raise(sig);
}

// The value of a global option that must act before parsing ("--name V" or "--name=V"; the
// last one given), or nullptr.
const char* global_option(int argc, char** argv, std::string_view name) {
    const char* value = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg == name && i + 1 < argc)
            value = argv[i + 1];
        else if (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
                 arg[name.size()] == '=')
            value = argv[i] + name.size() + 1;
    }
    return value;
}

} // namespace

int main(int argc, char** argv) {
    using namespace switchyard;
    CLI::App app{
        "Switchyard: explore the compute backends installed here, resolve kernels, profile them.\n"
        "Exit codes: 0 ok, 1 failure, 2 usage error or unknown name.",
        "switchyard-cli"};
    app.set_version_flag("--version", switchyard::app::version_text("switchyard-cli"),
                         "Print the version, git hash and build type and exit");
    app.require_subcommand(1);
    app.fallthrough(false);

    // --max-isa caps CPU detection, which the subcommands' set-up may already run: it is
    // applied from argv before parsing (and profile workers inherit it through the variable).
    std::string max_isa;
    app.add_option("--max-isa", max_isa,
                   "Cap the detected CPU ISA level (generic, x86-64-v2, x86-64-v3, x86-64-v4) to "
                   "see what a smaller machine would pick; same as SWITCHYARD_MAX_ISA")
        ->type_name("LEVEL");
    if (const char* v = global_option(argc, argv, "--max-isa")) {
        if (const auto error = validate_isa_cap(v, "--max-isa"); !error.empty()) {
            std::cerr << "switchyard-cli: " << error << "\n";
            return cli::Usage;
        }
        ::setenv("SWITCHYARD_MAX_ISA", v, 1);
    }
    if (const auto& cap = cpu_isa_cap(); !cap.error.empty()) {
        std::cerr << "switchyard-cli: " << cap.error << "\n";
        return cli::Usage;
    }
    // --pin-cpu likewise, before anything measures (the CPU is chosen at the first
    // measurement); refused here where SWITCHYARD_PIN_CPU only warns, since it was typed now.
    std::string pin_cpu;
    app.add_option("--pin-cpu", pin_cpu,
                   "The CPU 1-thread probes and rows run on (a number, or \"off\" to leave them "
                   "unpinned); default: the CPU the process is on when it first measures. Same as "
                   "SWITCHYARD_PIN_CPU")
        ->type_name("CPU|off");
    if (const char* v = global_option(argc, argv, "--pin-cpu")) {
        if (const auto error = pin_cpu_value_error(v); !error.empty()) {
            std::cerr << "switchyard-cli: --pin-cpu: " << error << "\n";
            return cli::Usage;
        }
        ::setenv("SWITCHYARD_PIN_CPU", v, 1);
    }

    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        signal(sig, on_terminating_signal);

    cli::Context context;
    cli::add_registry_commands(app, context);
    cli::add_profile_commands(app, context);
    cli::add_compare_commands(app, context);
    cli::add_doctor_command(app, context);
    cli::add_fleet_commands(app, context);

    // A mistyped subcommand or option is named with the close ones before CLI11's own words.
    if (const auto typo = cli::command_line_typo(app, argc, argv); !typo.empty()) {
        std::cerr << "switchyard-cli: " << typo << "\n";
        return cli::Usage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? cli::Ok : cli::Usage;
    }
    return context.exit_code;
}

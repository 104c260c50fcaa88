// SPDX-License-Identifier: MIT
// switchyard-cli: the headless face of Switchyard (and its profiling worker).
#include "cmd_doctor.h"
#include "cmd_profile.h"
#include "command.h"

#include <switchyard/sdk/version.h>
#include <switchyard/worker/workercontroller.h>

#include <signal.h>

#include <iostream>

namespace {

// Ctrl-C or a TERM: the workers' process groups go first (a worker never outlives the run),
// then the default action, so the exit status still says which signal it was.
extern "C" void on_terminating_signal(int sig) {
    switchyard::kill_live_workers();
    signal(sig, SIG_DFL);
    raise(sig);
}

} // namespace

int main(int argc, char** argv) {
    using namespace switchyard;
    CLI::App app{
        "Switchyard: explore the compute backends installed here, resolve kernels, profile them.\n"
        "Exit codes: 0 ok, 1 failure, 2 usage error or unknown name.",
        "switchyard-cli"};
    app.set_version_flag("--version",
                         std::string(core_version()) + " (" + std::string(core_git_hash()) + ")");
    app.require_subcommand(1);
    app.fallthrough(false);

    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        signal(sig, on_terminating_signal);

    cli::Context context;
    cli::add_registry_commands(app, context);
    cli::add_profile_commands(app, context);
    cli::add_doctor_command(app, context);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? cli::Ok : cli::Usage;
    }
    return context.exit_code;
}

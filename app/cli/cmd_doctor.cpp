// SPDX-License-Identifier: MIT
// doctor: everything a support engineer needs in one paste.
#include "cmd_doctor.h"

#include <switchyard/doctor/doctor.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/worker/inspect.h>

#include <iostream>
#include <memory>

namespace switchyard::cli {

void add_doctor_command(CLI::App& app, Context& context) {
    struct Options {
        bool json = false;
        bool markdown = false;
        bool probe = false;
        double probe_timeout = InspectOptions{}.probe_timeout_s;
        double load_timeout = InspectOptions{}.timeout_s;
    };
    auto options = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "doctor", "Diagnose this machine: build, OS, devices, plugin search path, every backend "
                  "and every problem "
                  "with what to do about it. Lists the devices of the device-backend plugins by "
                  "loading them in a worker process. Exit 1 when an error is found.");
    auto* json_flag = cmd->add_flag("--json", options->json, "Machine-readable report");
    cmd->add_flag("--markdown", options->markdown, "A Markdown report to paste into a ticket")
        ->excludes(json_flag);
    cmd->add_flag("--probe", options->probe,
                  "Measure every device's ceilings first (bandwidth per memory level, FMA "
                  "peak; about a second) so the report lists them");
    add_probe_timeout_option(cmd, options->probe_timeout);
    add_load_timeout_option(cmd, options->load_timeout);
    set_action(cmd, context, [options]() {
        // Device backends publish their devices when loaded: they are loaded (and their
        // devices probed) in an inspection worker, and come back as data. A plugin whose
        // load ends that worker is Failed with its cause, and the report goes on.
        InspectOptions inspect;
        inspect.probe_timeout_s = options->probe_timeout;
        inspect.timeout_s = options->load_timeout;
        if (options->probe) // measured once and kept, as a profile keeps them
            prepare_with_ceiling_cache(default_devices(), inspect);
        const auto inspected =
            inspect_device_backends(default_backends(), default_devices(), options->probe, inspect);
        auto report = DoctorReport::collect(default_backends(), default_devices(),
                                            PluginSearchPath::from_environment());
        apply_inspection(report, inspected);
        apply_tunings(report, default_backends());
        if (options->json)
            std::cout << json_text(report.to_json(), 2) << "\n";
        else if (options->markdown)
            std::cout << report.to_markdown();
        else
            std::cout << report.to_text();
        return report.has_errors() ? Failure : Ok;
    });
}

} // namespace switchyard::cli

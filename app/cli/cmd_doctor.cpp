// SPDX-License-Identifier: MIT
// doctor: everything a support engineer needs in one paste.
#include "cmd_doctor.h"

#include <switchyard/doctor/doctor.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>

#include <iostream>
#include <memory>

namespace switchyard::cli {

void add_doctor_command(CLI::App& app, Context& context) {
    struct Options {
        bool json = false;
        bool markdown = false;
        bool probe = false;
    };
    auto options = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "doctor", "Diagnose this machine: build, OS, devices, plugin search path, every backend "
                  "and every problem "
                  "with what to do about it. Loads only the device-backend plugins, to list their "
                  "devices. Exit 1 when an error is found.");
    auto* json_flag = cmd->add_flag("--json", options->json, "Machine-readable report");
    cmd->add_flag("--markdown", options->markdown, "A Markdown report to paste into a ticket")
        ->excludes(json_flag);
    cmd->add_flag("--probe", options->probe,
                  "Measure every device's ceilings first (bandwidth per memory level, FMA "
                  "peak; about a second) so the report lists them");
    set_action(cmd, context, [options]() {
        // Device backends publish their devices when loaded: list them all.
        default_backends().load_device_backends();
        if (options->probe)
            for (const auto& d : default_devices().devices())
                d->prepare();
        const auto report = DoctorReport::collect(default_backends(), default_devices(),
                                                  PluginSearchPath::from_environment());
        if (options->json)
            std::cout << report.to_json().dump(2) << "\n";
        else if (options->markdown)
            std::cout << report.to_markdown();
        else
            std::cout << report.to_text();
        return report.has_errors() ? Failure : Ok;
    });
}

} // namespace switchyard::cli

// SPDX-License-Identifier: MIT
#include <switchyard/worker/workermain.h>

#include <switchyard/worker/abcontroller.h>
#include <switchyard/worker/inspect.h>
#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workercontroller.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace switchyard {

std::string_view to_string(WorkerMode mode) noexcept {
    return mode == WorkerMode::Profile  ? "profile"
           : mode == WorkerMode::Slices ? "slices"
                                        : "inspect";
}

std::optional<WorkerMode> worker_mode_from_string(std::string_view text) noexcept {
    if (text == "profile")
        return WorkerMode::Profile;
    if (text == "inspect")
        return WorkerMode::Inspect;
    if (text == "slices")
        return WorkerMode::Slices;
    return std::nullopt;
}

int worker_main(WorkerMode mode, const WorkerHost& host) {
    // The protocol gets the real stdout; anything a kernel or a plugin prints goes to stderr.
    const int proto = ::dup(STDOUT_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    if (mode == WorkerMode::Slices) {
        // Its request is the first line; the commands follow, line by line, as the run goes.
        std::string first;
        std::getline(std::cin, first);
        protocol::ProfileRequest request;
        try {
            request = protocol::profile_request_from_json(nlohmann::json::parse(first));
        } catch (const std::exception& e) {
            const std::string line = protocol::to_line(
                protocol::fatal_message(std::string("worker: bad input: ") + e.what(), true));
            (void)!::write(proto, line.data(), line.size());
            return 2;
        }
        return run_slice_worker(request, std::cin, proto, host.backends, host.devices);
    }
    const std::string input{std::istreambuf_iterator<char>(std::cin),
                            std::istreambuf_iterator<char>()};
    if (mode == WorkerMode::Inspect) {
        const nlohmann::json document = nlohmann::json::parse(input, nullptr, false);
        protocol::InspectRequest request;
        try {
            request = protocol::inspect_request_from_json(document);
        } catch (const std::exception&) {
            // Answers with the fatal usage message that names the bad key.
            return run_inspect_worker(document, proto, host.backends, &host.devices);
        }
        // The caller's plugin folders, exactly (the GUI's search path may not be the default).
        if (!request.plugin_dirs.empty() && host.use_plugin_dirs)
            host.use_plugin_dirs(request.plugin_dirs);
        return run_inspect_worker(request, proto, host.backends, &host.devices);
    }
    protocol::ProfileRequest request;
    try {
        request = protocol::profile_request_from_json(nlohmann::json::parse(input));
    } catch (const std::exception& e) {
        const std::string line = protocol::to_line(
            protocol::fatal_message(std::string("worker: bad input: ") + e.what(), true));
        (void)!::write(proto, line.data(), line.size());
        return 2;
    }
    return run_profile_worker(request, proto, host.backends, host.devices);
}

} // namespace switchyard

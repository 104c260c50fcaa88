// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendinfoformat.h> // untrusted(): the one escaper

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::cli {

/// Exit codes other tools rely on.
enum ExitCode { Ok = 0, Failure = 1, Usage = 2 };

/// Shared state of one invocation: the exit code the chosen subcommand produced.
struct Context {
    int exit_code = Ok;
};

/// Runs `fn` as the subcommand's action, mapping errors to exit codes and messages on
/// stderr: unknown names and bad arguments -> 2 (with suggestions), anything else -> 1.
void set_action(CLI::App* command, Context& context, std::function<int()> fn);

/// A check for a numeric option: the text must be a finite number in [lo, hi] (lo excluded
/// when `lo_open`). The usage error names the option as typed and what it got:
/// "--timeout: must be a finite number of seconds > 0 and at most 604800, got 'nan'".
/// `what` describes the value ("a finite number of seconds").
CLI::Validator number_in(double lo, bool lo_open, double hi, const std::string& what);

/// `--probe-timeout SECONDS` (hardware, doctor): how long a device backend may take to list
/// its devices or to probe one device in the inspection worker before it is killed.
void add_probe_timeout_option(CLI::App* cmd, double& seconds);
/// --load-timeout SECONDS (InspectOptions::timeout_s): how long one plugin load may take in
/// the inspection worker.
void add_load_timeout_option(CLI::App* cmd, double& seconds);

/// A check for an integer option: the text must be a decimal integer in [lo, hi]
/// ("--seed: must be an integer from 0 to 9007199254740992, got '-1'").
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi);

/// A plain-text table with aligned columns.
std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

/// The envelope of every --json output: {"format": "switchyard.<command>", "format_version": 1,
/// ...body}.
nlohmann::json envelope(const std::string& command, nlohmann::json body = nlohmann::json::object());

void add_registry_commands(CLI::App& app, Context& context);

/// The first name typed on `args` (argv without the program) that `app` does not know: a
/// subcommand at any level ("lst", "fleet sbumit") or an option of the command it reaches
/// ("profile --jsno"), as a usage message with the close names (registry/suggest.h); "" when
/// every name is known. Values are not judged here: each option's own check does that.
/// What follows "--" belongs to another command (fleet submit's profile settings, checked on
/// their own).
std::string command_line_typo(CLI::App& app, const std::vector<std::string>& args);
std::string command_line_typo(CLI::App& app, int argc, char** argv);

} // namespace switchyard::cli

// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <nlohmann/json.hpp>

#include <string>

namespace switchyard {

/// What makes a machine the machine it is, for telling whether two reports were measured
/// on the same one (context.fingerprint; compare, the fleet table and `check` use it):
///
///     {"machine": {"cpu": {vendor, brand, family, model, stepping, microcode,
///                          logical_cpus, physical_cores, caches: "L1d 48 KiB, L2 1 MiB, ..."},
///                  "memory_gib": 24, "isa": {best, detected, cap},
///                  "gpus": [{vendor, model, name, driver, driver_version}],
///                  "openblas": {core, threads}},
///      "software": {"switchyard": {version, git_hash, build_type, compiler}, "os": kernel},
///      "machine_id": "5f0c1e2a9b3d4c7e"}
///
/// `machine_id` hashes the machine part only (FNV-1a 64 over its canonical JSON): two
/// nodes of one class share it; the host name is not part of it. Memory is rounded to the
/// GiB (the kernel's MemTotal moves by a few MiB between boots). The GPUs are the host's
/// (hardware/hostgpus.h: the PCI bus), not the devices a run selected nor those its plugins
/// list, so one host has one id whatever a run's --device or SWITCHYARD_PLUGIN_PATH (a run's
/// devices are its context's `devices`).
SWITCHYARD_CORE_EXPORT nlohmann::json machine_fingerprint();

/// The machine_id of a fingerprint's machine part (what machine_fingerprint() stores).
SWITCHYARD_CORE_EXPORT std::string fingerprint_id(const nlohmann::json& machine);

/// /proc/cpuinfo's first "microcode" value ("0xa101144"); "" where there is none (a VM
/// may hide it, other architectures).
SWITCHYARD_CORE_EXPORT std::string cpu_microcode();

} // namespace switchyard

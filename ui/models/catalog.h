// SPDX-License-Identifier: MIT
#pragma once

// What the explorer's models show, as plain data: the catalog the CatalogController
// collects on its worker thread and the fallback chains of one target. Models and views
// take these; none of them needs the controller.

#include <switchyard/doctor/doctor.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/tuning/tunedresolve.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace switchyard::ui {

/// One cell of the kernel or component registry, as plain data (no predicate to call).
struct CellRow {
    std::vector<std::string> key; // (op, device, arch, variant) or (kind, device, variant)
    bool available = false;
    bool loaded = false; // registered by the library, not only declared by a manifest
    std::string source;
    std::string backend;
    std::int64_t workspace_bytes = 0;
};

/// Everything the panels show, collected on the worker thread in one go.
struct CatalogSnapshot {
    std::vector<BackendInfo> backends; // described in full (ELF dependencies read)
    std::vector<CellRow> kernels;
    std::vector<CellRow> components;
    DoctorReport doctor; // devices, CPU, runtimes, problems, build
    std::string doctorMarkdown;
    /// The tuning files' entries as they stand here (tuning_standings(): files and build IDs
    /// read on the controller's thread, never the GUI's); the kernel matrix marks them.
    std::vector<TuningStanding> tunings;

    const BackendInfo* backend(const std::string& name) const;
};

/// The fallback chains of every op for one target (the matrix's winners and chains).
struct TargetResolution {
    std::string target;
    std::vector<Resolution> resolutions; // one per op, sorted by op
    std::vector<std::string> errors;     // ops that could not be resolved, with why
    bool loaded = false;                 // the worker loaded plugins (or a load failed) on the way

    const Resolution* find(const std::string& op) const;
};

using CatalogPtr = std::shared_ptr<const CatalogSnapshot>;
using TargetResolutionPtr = std::shared_ptr<const TargetResolution>;

} // namespace switchyard::ui

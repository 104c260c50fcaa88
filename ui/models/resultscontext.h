// SPDX-License-Identifier: MIT
#pragma once

// What a report's context says (RunContext: switchyard, host, cpu, devices with their
// ceilings, settings, warnings), read for the GUI: the roofline's ceilings, the
// context pane of a report from another machine, and the ceiling check of a comparison.

#include <switchyard/report/report.h>

#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace switchyard::ui {

/// One ceiling line of the roofline, read from a report's context.
struct RooflineCeiling {
    QString device;
    QString id;
    QString kind; // "bandwidth" (GB/s) or "compute" (GFLOP/s)
    QString level;
    double value = 0;
    bool measured = true;
    QString method;
    int threads = 0;       // 0: all threads / the whole device
    Ceiling source;        // as the report has it
    QString label() const; // "cpu L3 112 GB/s (triad, all threads)"
    /// What the roofline writes on the line: "L2 triad 106 GB/s", "FMA fp32 229 GFLOP/s",
    /// "DRAM (theoretical) 40 GB/s" (the id's parts after the level; no device, no threads).
    QString roofLabel() const;
    bool isCompute() const { return kind == QLatin1String("compute"); }
};

/// Every ceiling of every device of the context (RunContext::ceilings: a device without
/// ceilings contributes its peak_bandwidth_gbs and peak_gflops instead).
std::vector<RooflineCeiling> ceilingsOf(const RunContext& context);

/// The context as HTML for the report pane: the machine (host, CPU), Switchyard's version
/// and build, every device with its peaks and ceilings, the settings and the warnings.
QString contextHtml(const RunContext& context);

/// One machine of a fleet in a few lines (label, value): CPU, memory, ISA level, GPUs,
/// OpenBLAS core, Switchyard build, OS, date and the fingerprint's machine id, from the
/// report's context. Empty values are left out.
std::vector<std::pair<QString, QString>> machineFacts(const RunContext& context);

/// "host (CPU model)" of a context: how a report's machine is named in the comparison.
QString machineName(const RunContext& context);

} // namespace switchyard::ui

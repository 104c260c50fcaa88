// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/fleet/fleettuning.h>
#include <switchyard/report/report.h>

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <memory>
#include <string>
#include <vector>

namespace switchyard::ui {

/// A report file of a fleet folder that could not be read (or read with warnings).
struct FleetFileIssue {
    QString file;      // the file name inside the folder
    QString error;     // ReportError's text (it names the key or the position)
    bool fatal = true; // false: read, with warnings (Report::warnings)
};

/// A folder of reports, read: what FleetLoader hands the GUI thread.
struct Fleet {
    QString folder;
    std::vector<Report> reports;        // the files that were read, in name order
    QStringList files;                  // the file name of each report
    QStringList hosts;                  // context.host.hostname of each (the file name when none)
    std::vector<FleetFileIssue> issues; // files that failed (never skipped silently)
    QString error;                      // the folder itself could not be listed ("" when it could)
    double seconds = 0;                 // listing and parsing
    /// The reports tuned per machine class and their regret map (fleet::tune_fleet, the
    /// CLI's `fleet collect --tune`); nothing written yet.
    fleet::FleetTuning tuning;
};
/// Not const: the receiver moves the reports into its model (MultiCompareModel::setReports).
using FleetPtr = std::shared_ptr<Fleet>;
/// The tunings as written (ClassTuning::file set), or the error that stopped the writing.
struct TuningsWritten {
    QString folder;
    fleet::FleetTuning tuning;
    QString error; // "" when every file was written
};
using TuningsWrittenPtr = std::shared_ptr<const TuningsWritten>;

/// Reads a fleet folder off the GUI thread: every regular file whose name starts with
/// "report" and ends in ".json", sorted by name (the files `switchyard-cli compare FOLDER`
/// takes), parsed in parallel. One job at a time; a newer open() supersedes the answer of
/// an older one. (hotspot's PerfParser shape: signals with plain results.)
class FleetLoader : public QObject {
    Q_OBJECT
public:
    explicit FleetLoader(QObject* parent = nullptr);
    ~FleetLoader() override;

    void open(const QString& folder);
    bool isBusy() const { return m_busy; }
    /// Blocks until the running job finished (tests, shutdown); its signal still arrives queued.
    void waitForIdle();

    /// The report files of `folder`, sorted by name; throws std::runtime_error when the
    /// folder cannot be listed.
    static std::vector<std::string> reportFiles(const std::string& folder);
    /// The whole job, synchronous (the worker's; also for tools, tests and the benchmark).
    static Fleet load(const QString& folder);

    /// Writes one tuning file per machine class of `tuning` into `folder`
    /// (fleet::write_tunings) off the GUI thread; tuningsWritten() says how it went.
    void writeTunings(const fleet::FleetTuning& tuning, const QString& folder);
    /// The same, synchronous.
    static TuningsWritten write(fleet::FleetTuning tuning, const QString& folder);

signals:
    void fleetAvailable(const switchyard::ui::FleetPtr& fleet);
    void busyChanged(bool busy);
    void tuningsWritten(const switchyard::ui::TuningsWrittenPtr& result);

private:
    QThreadPool m_pool;
    quint64 m_generation = 0;
    bool m_busy = false;
};

} // namespace switchyard::ui

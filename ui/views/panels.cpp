// SPDX-License-Identifier: MIT
#include "views/panels.h"
#include "views/viewsupport.h"

#include "models/dependencymodel.h"
#include "models/hardwaremodel.h"
#include "models/problemmodel.h"
#include "models/qtstring.h"
#include "models/tone.h"

#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/sdk/version.h>

#include <QApplication>
#include <QClipboard>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <set>

namespace switchyard::ui {
namespace {
QLabel* selectableLabel() {
    auto* l = new QLabel;
    l->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    return l;
}
QString mark(bool ok) {
    return ok ? QStringLiteral("<span style='color:%1'>✔ pass</span>")
                    .arg(toneColor(Tone::Good).name())
              : QStringLiteral("<span style='color:%1'>✘ fail</span>")
                    .arg(toneColor(Tone::Bad).name());
}
QString esc(const std::string& s) {
    return qs(s).toHtmlEscaped();
}
// What "Copy install command" copies: each missing dependency's declared install hint, and a
// search for the package of each library the loader cannot find.
QString installCommands(const BackendInfo* b) {
    if (!b)
        return {};
    QStringList lines;
    for (const auto& d : b->dependencies)
        if (!d.found && !d.dependency.hint.empty())
            lines << qs(untrusted(d.dependency.hint));
    if (b->library_report)
        for (const auto& s : b->library_report->unresolved())
            lines << QStringLiteral("apt-file search %1   # find the package that ships it")
                         .arg(qs(untrusted(s)));
    return lines.join(QLatin1Char('\n'));
}
QString keyText(const std::vector<std::string>& key) {
    QStringList parts;
    for (const auto& k : key)
        parts << qs(k);
    return QStringLiteral("(%1)").arg(parts.join(QStringLiteral(", ")));
}
} // namespace

CapabilitiesPanel::CapabilitiesPanel(QWidget* parent)
    : QWidget(parent), m_form(new QFormLayout), m_title(new QLabel) {
    identify(this, "capabilitiesPanel", tr("Capabilities"),
             tr("The selected backend: identity, state, why it does not load and the fix, "
                "contract, paths and cells"));
    identify(m_title, "capabilitiesTitle", tr("Backend"));
    auto* inner = new QWidget;
    auto* v = new QVBoxLayout(inner);
    QFont f = m_title->font();
    f.setPointSizeF(f.pointSizeF() * 1.4);
    f.setBold(true);
    m_title->setFont(f);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(m_title);
    v->addLayout(m_form);
    v->addStretch();
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignRight | Qt::AlignTop);
    const std::pair<const char*, QString> rows[] = {
        {"version", tr("Version")},
        {"source", tr("Source")},
        {"tags", tr("Tags")},
        {"state", tr("State")},
        {"why", tr("Why")},
        {"fix", tr("Fix")},
        {"details", tr("Details")},
        {"contract", tr("Contract")},
        {"core", tr("Core range")},
        {"library", tr("Library")},
        {"manifest", tr("Manifest")},
        {"description", tr("Description")},
        {"cells", tr("Declared vs registered")},
        {"diagnostics", tr("Differences")},
        {"extra", tr("Unknown manifest keys")},
    };
    QLabel* why = nullptr;
    for (const auto& [key, label] : rows) {
        QLabel* value = addRow(QLatin1String(key), label);
        if (key == std::string_view("why"))
            why = value;
    }
    why->setTextInteractionFlags(why->textInteractionFlags() | Qt::LinksAccessibleByMouse |
                                 Qt::LinksAccessibleByKeyboard);
    connect(why, &QLabel::linkActivated, this, [this](const QString&) {
        auto* details = field(QStringLiteral("details"));
        m_form->setRowVisible(details, !m_form->isRowVisible(details));
    });
    auto* scroll = new QScrollArea;
    scroll->setWidget(inner);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
    setBackend(nullptr, nullptr);
}

QLabel* CapabilitiesPanel::addRow(const QString& key, const QString& label) {
    auto* value = selectableLabel();
    identify(value, key.toLatin1().constData(), label);
    m_form->addRow(QStringLiteral("<b>%1</b>").arg(label), value);
    return value;
}

QLabel* CapabilitiesPanel::field(const QString& key) const {
    return findChild<QLabel*>(key);
}

void CapabilitiesPanel::setBackend(const BackendInfo* b, const CatalogSnapshot* catalog) {
    if (!b) {
        m_title->setText(tr("Select a backend in the tree"));
        for (auto* l : findChildren<QLabel*>())
            if (!l->objectName().isEmpty())
                l->clear();
        return;
    }
    m_title->setText(qs(b->name));
    field(QStringLiteral("version"))->setText(esc(b->version.empty() ? "—" : b->version));
    field(QStringLiteral("source"))->setText(qs(to_string(b->source)));
    QStringList tags;
    for (const auto& t : b->tags)
        tags << esc(t);
    field(QStringLiteral("tags"))
        ->setText(tags.isEmpty() ? tr("(none)") : tags.join(QStringLiteral(", ")));
    const QColor stateColor = b->is_available() ? toneColor(Tone::Good) : toneColor(Tone::Bad);
    field(QStringLiteral("state"))
        ->setText(
            QStringLiteral("<span style='color:%1'><b>%2</b></span>%3")
                .arg(
                    stateColor.name(), qs(to_string(b->state)),
                    b->cause == BackendCause::None
                        ? QString()
                        : QStringLiteral(" — cause <code>%1</code>").arg(qs(to_string(b->cause)))));
    // The cause table's summary and fix (the core's `explain`, as `show` and the doctor
    // print them); the stored message one click away; nothing for a healthy backend.
    const CauseText cause = explain(*b);
    const bool problem = !cause.summary.empty();
    auto* details = field(QStringLiteral("details"));
    field(QStringLiteral("why"))
        ->setText(problem ? QStringLiteral("%1%2").arg(
                                esc(cause.summary),
                                cause.details.empty()
                                    ? QString()
                                    : QStringLiteral(" &nbsp;<a href='#details'>%1</a>")
                                          .arg(tr("Show details")))
                          : QString());
    field(QStringLiteral("fix"))
        ->setText(esc(cause.fix).replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    details->setText(
        QStringLiteral("<small>%1</small>")
            .arg(esc(cause.details).replace(QLatin1Char('\n'), QStringLiteral("<br>"))));
    m_form->setRowVisible(field(QStringLiteral("why")), problem);
    m_form->setRowVisible(field(QStringLiteral("fix")), problem && !cause.fix.empty());
    m_form->setRowVisible(details, false);
    const auto& caps = b->capabilities;
    field(QStringLiteral("contract"))
        ->setText(tr("declares %1, this core implements %2 — %3")
                      .arg(caps.contract_version)
                      .arg(kContractVersion)
                      .arg(mark(caps.contract_version <= kContractVersion)));
    const auto core = parse_version(core_version());
    auto within = [&](const std::optional<std::string>& bound, bool min) {
        if (!bound || !core)
            return true;
        const auto v = parse_version(*bound);
        return !v || (min ? *core >= *v : *core <= *v);
    };
    field(QStringLiteral("core"))
        ->setText(tr("%1 … %2, this core is %3 — %4")
                      .arg(esc(caps.min_core_version.value_or("any")),
                           esc(caps.max_core_version.value_or("any")), qs(core_version()),
                           mark(within(caps.min_core_version, true) &&
                                within(caps.max_core_version, false))));
    field(QStringLiteral("library"))
        ->setText(b->library_path.empty() ? tr("(in process)") : esc(b->library_path));
    field(QStringLiteral("manifest"))
        ->setText(b->manifest_path.empty() ? tr("(none)") : esc(b->manifest_path));
    field(QStringLiteral("description"))->setText(esc(b->description));

    // Declared (manifest) vs registered (the library's real cells).
    std::set<std::vector<std::string>> declared, registered;
    for (const auto& c : b->declared_kernels)
        declared.insert(c.key);
    for (const auto& c : b->declared_components)
        declared.insert(c.key);
    if (catalog)
        for (const auto* cells : {&catalog->kernels, &catalog->components})
            for (const auto& c : *cells)
                if (c.backend == b->name && c.loaded)
                    registered.insert(c.key);
    QStringList lines;
    std::set<std::vector<std::string>> all(declared);
    all.insert(registered.begin(), registered.end());
    // A plugin loaded only in the inspection worker (to list its devices) has no cell in
    // this process: its manifest's cells are all there is to compare here, not a mismatch.
    const bool loaded = b->state == BackendState::Loaded && !registered.empty();
    for (const auto& k : all) {
        const bool d = declared.count(k), r = registered.count(k);
        QString note =
            d && r ? tr("declared, registered")
            : d    ? (loaded || b->source != BackendSource::Plugin
                          ? QStringLiteral("<span style='color:%1'>%2</span>")
                             .arg(toneColor(Tone::Bad).name(), tr("declared, NOT registered"))
                      : b->state == BackendState::Loaded
                          ? tr("declared (its library ran in the inspection worker, not "
                                  "in this window)")
                          : tr("declared (library not loaded yet)"))
                   : (b->source == BackendSource::Plugin
                          ? QStringLiteral("<span style='color:%1'>%2</span>")
                             .arg(toneColor(Tone::Bad).name(), tr("registered, NOT declared"))
                          : tr("registered"));
        lines << QStringLiteral("<code>%1</code> — %2").arg(keyText(k).toHtmlEscaped(), note);
    }
    field(QStringLiteral("cells"))
        ->setText(lines.isEmpty() ? tr("(none)") : lines.join(QStringLiteral("<br>")));
    QStringList diags;
    for (const auto& d : b->diagnostics)
        diags << esc(d);
    field(QStringLiteral("diagnostics"))
        ->setText(diags.isEmpty() ? tr("none") : diags.join(QStringLiteral("<br>")));
    field(QStringLiteral("extra"))
        ->setText(b->extra.empty() ? tr("none")
                                   : QStringLiteral("<pre>%1</pre>").arg(esc(b->extra.dump(2))));
}

DependenciesPanel::DependenciesPanel(QWidget* parent)
    : QWidget(parent), m_model(new DependencyModel(this)), m_tree(new QTreeView),
      m_problem(new QPlainTextEdit), m_searchPath(selectableLabel()),
      m_copyInstall(new QPushButton(tr("Copy &install command"))),
      m_copyReport(new QPushButton(tr("Copy diagnostic &report"))) {
    identify(this, "dependenciesPanel", tr("Dependencies"),
             tr("The selected backend's optional dependencies and library dependency tree"));
    identify(m_tree, "dependencyTree", tr("Dependency tree"),
             tr("Each library the backend needs, where it was found, or that it is missing"));
    identify(m_problem, "dependencyProblem", tr("Dependency problem"));
    identify(m_searchPath, "dependencySearchPath", tr("Search path tried"));
    identify(m_copyInstall, "copyInstallCommand", tr("Copy install command"),
             tr("Copies the command that installs the missing packages"));
    identify(m_copyReport, "copyDiagnosticReport", tr("Copy diagnostic report"),
             tr("The doctor's Markdown report of the whole machine, for a support ticket"));
    m_tree->setModel(m_model);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(QHeaderView::Interactive);
    m_tree->setColumnWidth(0, 300);
    m_tree->setColumnWidth(1, 110);
    m_problem->setReadOnly(true);
    m_problem->setMaximumHeight(90);
    m_problem->setPlaceholderText(tr("No problem with this backend's dependencies."));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_copyInstall);
    buttons->addWidget(m_copyReport);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_problem);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_searchPath);
    layout->addLayout(buttons);
    connect(m_model, &QAbstractItemModel::modelReset, m_tree, &QTreeView::expandAll);
    connect(m_copyInstall, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(m_install); });
    connect(m_copyReport, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(m_report); });
    setBackend(nullptr, nullptr);
}

void DependenciesPanel::setBackend(const BackendInfo* b, const CatalogSnapshot* catalog) {
    m_model->setBackend(b);
    m_report = catalog ? qs(catalog->doctorMarkdown) : QString();
    m_copyReport->setEnabled(!m_report.isEmpty());
    const CauseText cause = b ? explain(*b) : CauseText{};
    m_install = installCommands(b);
    m_copyInstall->setEnabled(!m_install.isEmpty());
    m_copyInstall->setToolTip(m_install);
    const QString why =
        cause.summary.empty() ? QString() : qs(cause.summary + "\n" + cause.fix).trimmed();
    m_problem->setPlainText(why);
    m_problem->setVisible(!why.isEmpty());
    QStringList dirs;
    if (b && b->library_report)
        for (const auto& d : b->library_report->dependencies)
            if (!d.found() && !d.detail.empty())
                dirs << QStringLiteral("<b>%1</b>: %2")
                            .arg(qs(d.soname).toHtmlEscaped(), qs(d.detail).toHtmlEscaped());
    m_searchPath->setText(dirs.isEmpty()
                              ? QString()
                              : tr("Search path tried — ") + dirs.join(QStringLiteral("<br>")));
}

ProblemsView::ProblemsView(QWidget* parent)
    : QWidget(parent), m_model(new ProblemModel(this)), m_table(new QTableView),
      m_text(new QPlainTextEdit) {
    identify(this, "problemsView", tr("Problems"),
             tr("Every problem found on the machine, with its fix"));
    identify(m_table, "problemsTable", tr("Problems"),
             tr("One row per problem; Enter or a double click selects its backend"));
    identify(m_text, "problemText", tr("Selected problem"));
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(ProblemModel::SortRole);
    m_table->setModel(proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(ProblemModel::SeverityColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setColumnWidth(ProblemModel::SeverityColumn, 90);
    m_table->setColumnWidth(ProblemModel::SubjectColumn, 170);
    m_table->setColumnWidth(ProblemModel::CauseColumn, 190);
    m_table->setColumnWidth(ProblemModel::ProblemColumn, 420);
    m_text->setReadOnly(true);
    m_text->setPlaceholderText(tr("Select a problem to see all of it, selectable."));
    auto* copy = new QPushButton(tr("Copy diagnostic &report"));
    identify(copy, "copyProblemsReport", tr("Copy diagnostic report"),
             tr("The doctor's Markdown report of the whole machine, for a support ticket"));
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(m_table);
    splitter->addWidget(m_text);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter, 1);
    auto* row = new QHBoxLayout;
    row->addStretch();
    row->addWidget(copy);
    layout->addLayout(row);
    connect(copy, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(m_report); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this, proxy](const QModelIndex& current) {
                const DoctorProblem* p = m_model->problemAt(proxy->mapToSource(current));
                m_text->setPlainText(p ? QStringLiteral("%1 — %2 [%3]\n\n%4\n\nFix: %5")
                                             .arg(qs(to_string(p->severity)), qs(p->subject),
                                                  qs(to_string(p->cause)), qs(p->problem),
                                                  qs(p->fix))
                                       : QString());
            });
    connect(m_table, &QTableView::activated, this, [this, proxy](const QModelIndex& index) {
        if (const DoctorProblem* p = m_model->problemAt(proxy->mapToSource(index)))
            emit subjectActivated(qs(p->subject));
    });
}

void ProblemsView::setResults(const CatalogSnapshot& catalog) {
    m_model->setResults(catalog.doctor.problems);
    m_report = qs(catalog.doctorMarkdown);
}

HardwarePanel::HardwarePanel(QWidget* parent)
    : QWidget(parent), m_model(new HardwareModel(this)), m_tree(new QTreeView) {
    identify(this, "hardwarePanel", tr("Hardware"),
             tr("The CPU, the devices and why a device class is absent"));
    identify(m_tree, "hardwareTree", tr("Hardware"));
    m_tree->setModel(m_model);
    m_tree->setColumnWidth(0, 260);
    m_tree->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tree);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_tree->expandToDepth(0);
        for (int i = 0; i < m_model->rowCount(); ++i) {
            const auto section = m_model->index(i, 0);
            for (int j = 0; j < m_model->rowCount(section); ++j)
                if (m_model->rowCount(m_model->index(j, 0, section)) < 12)
                    m_tree->expand(m_model->index(j, 0, section));
        }
    });
}

void HardwarePanel::setResults(const CatalogSnapshot& catalog) {
    m_model->setResults(catalog.doctor);
}

} // namespace switchyard::ui

// SPDX-License-Identifier: MIT
#include <switchyard/ui/mainwindow.h>

#include <switchyard/ui/backendcatalog.h>
#include <switchyard/ui/backendmodel.h>

#include <switchyard/registry/backendinfoformat.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

namespace switchyard::ui {
namespace {
QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// The same text as `switchyard-cli show` (one renderer, registry/backendinfoformat.h).
QString describe(const BackendInfo& b) {
    return qs(render_text(b));
}
} // namespace

MainWindow::MainWindow(BackendRegistry& registry, QWidget* parent)
    : QMainWindow(parent), m_catalog(new BackendCatalog(registry, this)),
      m_model(new BackendModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_view(new QTreeView), m_filter(new QLineEdit), m_details(new QPlainTextEdit),
      m_status(new QLabel) {
    setWindowTitle(tr("Switchyard"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(BackendModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_view->setModel(m_proxy);
    m_view->setRootIsDecorated(false);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(BackendModel::NameColumn, Qt::AscendingOrder);
    m_view->setAlternatingRowColors(true);
    m_view->header()->setStretchLastSection(true);

    m_filter->setPlaceholderText(tr("Filter backends (name, tag, state)…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy,
            &QSortFilterProxyModel::setFilterFixedString);

    m_details->setReadOnly(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_details->setPlaceholderText(
        tr("Select a backend to see its capabilities, dependencies and cells."));

    auto* left = new QWidget;
    auto* layout = new QVBoxLayout(left);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_filter);
    layout->addWidget(m_view);
    auto* splitter = new QSplitter;
    splitter->addWidget(left);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    setCentralWidget(splitter);
    statusBar()->addWidget(m_status, 1);
    m_status->setText(tr("Discovering backends…"));

    auto* toolbar = addToolBar(tr("Main"));
    auto* rescan = toolbar->addAction(tr("Rescan plugins"));
    connect(rescan, &QAction::triggered, this, [this] { m_catalog->refresh(true); });
    auto* copy = toolbar->addAction(tr("Copy details"));
    connect(copy, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(m_details->toPlainText()); });

    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &MainWindow::showDetails);
    connect(m_catalog, &BackendCatalog::backendsAvailable, this,
            [this](const std::vector<BackendInfo>& b) {
                m_model->setResults(b);
                const auto usable = std::count_if(
                    b.begin(), b.end(), [](const BackendInfo& i) { return i.is_available(); });
                m_status->setText(tr("%1 backends, %2 usable here").arg(b.size()).arg(usable));
                m_view->resizeColumnToContents(BackendModel::NameColumn);
                if (m_proxy->rowCount() > 0)
                    m_view->setCurrentIndex(m_proxy->index(0, 0));
            });
    connect(m_catalog, &BackendCatalog::backendsFailed, this, [this](const QString& e) {
        m_status->setText(tr("Could not list backends: %1").arg(e));
    });
    resize(1000, 600);
    m_catalog->refresh();
}

void MainWindow::showDetails() {
    const BackendInfo* b = m_model->backendAt(m_proxy->mapToSource(m_view->currentIndex()));
    m_details->setPlainText(b ? describe(*b) : QString());
}

} // namespace switchyard::ui

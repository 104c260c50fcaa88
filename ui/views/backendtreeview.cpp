// SPDX-License-Identifier: MIT
#include "views/backendtreeview.h"
#include "models/qtstring.h"
#include "views/viewsupport.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace switchyard::ui {

BackendTreeView::BackendTreeView(QWidget* parent)
    : QWidget(parent), m_model(new BackendTreeModel(this)), m_proxy(new BackendFilterProxy(this)),
      m_search(new QLineEdit), m_grouping(new QComboBox),
      m_showUnavailable(new QCheckBox(tr("Show unavailable"))), m_chips(new QWidget),
      m_chipLayout(new QHBoxLayout(m_chips)), m_tree(new QTreeView) {
    identify(this, "backendTree", tr("Backends"),
             tr("The installed backends, grouped, with their kernels and components"));
    identify(m_search, "backendSearch", tr("Search backends"),
             tr("Filters the tree by backend, kernel, component or tag (Ctrl+F)"));
    identify(m_grouping, "groupingBox", tr("Grouping"), tr("Group the tree by source or by tag"));
    identify(m_showUnavailable, "showUnavailableBox", tr("Show unavailable"),
             tr("Also lists the backends that cannot load here"));
    identify(m_tree, "backendTreeView", tr("Backend tree"));
    m_proxy->setSourceModel(m_model);
    m_search->setPlaceholderText(tr("Search backends, kernels (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_grouping->addItem(tr("Group by source"));
    m_grouping->addItem(tr("Group by tag"));
    m_showUnavailable->setChecked(m_proxy->showUnavailable());
    m_chipLayout->setContentsMargins(0, 0, 0, 0);
    m_chipLayout->setSpacing(4);
    auto* chipScroll = new QScrollArea;
    chipScroll->setWidget(m_chips);
    chipScroll->setWidgetResizable(true);
    chipScroll->setFrameShape(QFrame::NoFrame);
    chipScroll->setFixedHeight(m_chips->sizeHint().height() + 30);
    chipScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    chipScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_tree->setModel(m_proxy);
    m_tree->setSortingEnabled(true);
    m_tree->sortByColumn(BackendTreeModel::NameColumn, Qt::AscendingOrder);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setStretchLastSection(true);

    auto* options = new QHBoxLayout;
    options->addWidget(m_grouping);
    options->addWidget(m_showUnavailable);
    options->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_search);
    layout->addLayout(options);
    auto* tagsLabel = new QLabel(tr("Tags:"));
    auto* tagsRow = new QHBoxLayout;
    tagsRow->addWidget(tagsLabel);
    tagsRow->addWidget(chipScroll, 1);
    layout->addLayout(tagsRow);
    layout->addWidget(m_tree, 1);

    connect(m_search, &QLineEdit::textChanged, m_proxy, [this](const QString& text) {
        m_proxy->setSearchText(text);
        if (!text.isEmpty())
            expandMatches();
    });
    connect(m_grouping, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_model->setGrouping(i == 1 ? BackendTreeModel::Grouping::ByTag
                                    : BackendTreeModel::Grouping::BySource);
    });
    connect(m_showUnavailable, &QCheckBox::toggled, m_proxy,
            &BackendFilterProxy::setShowUnavailable);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        for (int i = 0; i < m_proxy->rowCount(); ++i)
            m_tree->expand(m_proxy->index(i, 0));
        m_tree->resizeColumnToContents(BackendTreeModel::NameColumn);
        if (!m_selected.isEmpty())
            selectBackend(m_selected);
    });
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, [this] {
        for (int i = 0; i < m_proxy->rowCount(); ++i)
            m_tree->expand(m_proxy->index(i, 0));
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex& parent) {
        if (!parent.isValid())
            for (int i = 0; i < m_proxy->rowCount(); ++i)
                m_tree->expand(m_proxy->index(i, 0));
    });
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &BackendTreeView::emitSelection);
}

void BackendTreeView::focusSearch() {
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

const BackendInfo* BackendTreeView::currentBackend() const {
    return m_model->backendAt(m_proxy->mapToSource(m_tree->currentIndex()));
}

int BackendTreeView::grouping() const {
    return m_grouping->currentIndex();
}

void BackendTreeView::setGrouping(int grouping) {
    m_grouping->setCurrentIndex(grouping);
}

bool BackendTreeView::showUnavailable() const {
    return m_showUnavailable->isChecked();
}

void BackendTreeView::setShowUnavailable(bool show) {
    m_showUnavailable->setChecked(show);
}

void BackendTreeView::expandMatches() {
    // Groups open, and the backends shown for a kernel or component the search names. A
    // search matching a thousand backends opens none of them: laying out 100,000 rows on
    // every keystroke would freeze the window, and nobody reads them all.
    constexpr int kMaxExpanded = 100;
    QModelIndexList backends;
    for (int g = 0; g < m_proxy->rowCount(); ++g) {
        const QModelIndex group = m_proxy->index(g, 0);
        m_tree->expand(group);
        for (int i = 0; i < m_proxy->rowCount(group); ++i) {
            const QModelIndex backend = m_proxy->index(i, 0, group);
            if (m_proxy->rowCount(backend) > 0)
                backends << backend;
        }
    }
    if (backends.size() > kMaxExpanded)
        return;
    for (const auto& b : backends)
        m_tree->expand(b);
}

void BackendTreeView::setResults(CatalogPtr catalog) {
    m_model->setResults(std::move(catalog));
    rebuildChips();
    if (!m_tree->currentIndex().isValid()) {
        // Select the first backend.
        for (int g = 0; g < m_proxy->rowCount(); ++g)
            if (m_proxy->rowCount(m_proxy->index(g, 0)) > 0) {
                m_tree->setCurrentIndex(m_proxy->index(0, 0, m_proxy->index(g, 0)));
                break;
            }
    }
}

QToolButton* BackendTreeView::tagChip(const QString& tag) const {
    for (auto* b : m_chips->findChildren<QToolButton*>())
        if (b->property("tag").toString() == tag)
            return b;
    return nullptr;
}

void BackendTreeView::rebuildChips() {
    for (auto* b : m_chips->findChildren<QToolButton*>())
        delete b;
    while (m_chipLayout->count() > 0)
        delete m_chipLayout->takeAt(0);
    for (const auto& tag : m_model->tags()) {
        auto* chip = new QToolButton;
        chip->setText(tag);
        chip->setProperty("tag", tag);
        chip->setCheckable(true);
        chip->setChecked(!m_proxy->excludedTags().contains(tag));
        chip->setToolTip(tr("Show backends tagged '%1'").arg(tag));
        chip->setAutoRaise(false);
        connect(chip, &QToolButton::toggled, this, [this, tag](bool on) {
            auto excluded = m_proxy->excludedTags();
            if (on)
                excluded.remove(tag);
            else
                excluded.insert(tag);
            m_proxy->setExcludedTags(excluded);
        });
        m_chipLayout->addWidget(chip);
    }
    m_chipLayout->addStretch();
}

bool BackendTreeView::selectBackend(const QString& name) {
    const auto matches = m_proxy->match(m_proxy->index(0, 0), Qt::DisplayRole, name, 1,
                                        Qt::MatchExactly | Qt::MatchRecursive);
    for (const auto& m : matches)
        if (m.data(BackendTreeModel::KindRole).toInt() == BackendTreeModel::BackendNode) {
            m_tree->setCurrentIndex(m);
            return true;
        }
    return false;
}

void BackendTreeView::emitSelection() {
    const QModelIndex current = m_tree->currentIndex();
    const BackendInfo* b = m_model->backendAt(m_proxy->mapToSource(current));
    if (b)
        m_selected = qs(b->name);
    emit backendSelected(b);
    if (current.data(BackendTreeModel::KindRole).toInt() == BackendTreeModel::KernelNode) {
        // "(gemm, cpu, generic, default)" -> "gemm"
        QString key = current.sibling(current.row(), 0).data().toString();
        key = key.mid(1).section(QLatin1Char(','), 0, 0);
        emit opSelected(key);
    }
}

} // namespace switchyard::ui

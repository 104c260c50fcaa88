// SPDX-License-Identifier: MIT
#include "views/kernelmatrixview.h"

#include "models/kernelmatrixmodel.h"
#include "models/qtstring.h"
#include "models/tone.h"
#include "views/viewsupport.h"

#include <QComboBox>
#include <QFontMetrics>
#include <QMenu>
#include <QTimer>

#include <algorithm>
#include <memory>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

QStringList KernelMatrixView::whatIfTargets() {
    return {QStringLiteral("cuda:sm_100"),   QStringLiteral("cuda:sm_90"),
            QStringLiteral("cuda:sm_89"),    QStringLiteral("cuda:sm_80"),
            QStringLiteral("cuda:sm_75"),    QStringLiteral("cpu:x86-64-v4"),
            QStringLiteral("cpu:x86-64-v3"), QStringLiteral("cpu:x86-64-v2"),
            QStringLiteral("cpu:generic"),   QStringLiteral("opencl"),
            QStringLiteral("vulkan")};
}

KernelMatrixView::KernelMatrixView(QWidget* parent)
    : QWidget(parent), m_model(new KernelMatrixModel(this)), m_chain(new ChainModel(this)),
      m_target(new QComboBox), m_summary(new QLabel), m_table(new QTableView),
      m_chainTable(new QTableView) {
    identify(this, "matrixView", tr("Kernel matrix"),
             tr("Which backend provides each op on each device, and the chain dispatch walks"));
    identify(m_table, "matrixTable", tr("Kernel availability"),
             tr("One row per op, one column per (device, arch, variant); the context menu or "
                "Profile ▸ Profile selected op profiles it"));
    identify(m_target, "targetBox", tr("Target"),
             tr("The device (or a what-if target) the chain is resolved for"));
    identify(m_summary, "chainSummary", tr("Resolution"));
    identify(m_chainTable, "chainTable", tr("Fallback chain"),
             tr("The selected op's chain rung by rung, and why each rung is taken or skipped"));
    m_table->setModel(m_model);
    m_table->horizontalHeader()->setDefaultSectionSize(74);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(24);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_chainTable->setModel(m_chain);
    m_chainTable->verticalHeader()->hide();
    m_chainTable->horizontalHeader()->setStretchLastSection(true);
    m_chainTable->setColumnWidth(ChainModel::RungColumn, 44);
    m_chainTable->setColumnWidth(ChainModel::KeyColumn, 280);
    m_chainTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_target->setEditable(false);
    m_target->setMinimumContentsLength(22);

    auto* legend = new QLabel(
        tr("<span style='background:%1'>&nbsp;✓ available&nbsp;</span> "
           "<span style='background:%2'>&nbsp;✗ declared, unavailable&nbsp;</span> "
           "<span style='background:%3'>&nbsp;★ resolved winner&nbsp;</span> &nbsp;n = rung of the "
           "selected op's chain · ⚑ a profile run found a faster cell · ⚙ a tuning file "
           "chooses this cell here")
            .arg(toneColor(Tone::Good, true).name(), toneColor(Tone::Warning, true).name(),
                 toneColor(Tone::Winner, true).name()));
    legend->setWordWrap(true);
    auto* top = new QHBoxLayout;
    auto* targetLabel = new QLabel(tr("&Target:"));
    targetLabel->setBuddy(m_target);
    top->addWidget(targetLabel);
    top->addWidget(m_target);
    top->addSpacing(12);
    top->addWidget(legend, 1);
    auto* bottom = new QWidget;
    auto* bl = new QVBoxLayout(bottom);
    bl->setContentsMargins(0, 0, 0, 0);
    bl->addWidget(m_summary);
    bl->addWidget(m_chainTable, 1);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->setObjectName(QStringLiteral("matrixSplitter"));
    splitter->addWidget(m_table);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        // Column widths from the header text only (cheap at 100,000 cells).
        const QFontMetrics fm(m_table->horizontalHeader()->font());
        for (int c = 0; c < m_model->columnCount(); ++c) {
            int w = 56;
            for (const auto& line :
                 m_model->headerData(c, Qt::Horizontal).toString().split(QLatin1Char('\n')))
                w = std::max(w, fm.horizontalAdvance(line) + 16);
            m_table->setColumnWidth(c, w);
        }
    });
    connect(m_target, &QComboBox::currentIndexChanged, this,
            [this] { emit targetChanged(target()); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    setSelectedOp(m_model->opAt(current.row()));
            });
    connect(m_table->verticalHeader(), &QHeaderView::sectionClicked, this,
            [this](int row) { setSelectedOp(m_model->opAt(row)); });
    setupProfileMenus();
}

void KernelMatrixView::setResults(const CatalogPtr& catalogPtr) {
    const CatalogSnapshot& catalog = *catalogPtr;
    m_model->setResults(catalogPtr);
    const QString current = target();
    const QSignalBlocker block(m_target);
    m_target->clear();
    for (const auto& d : catalog.doctor.devices) {
        const QString t =
            d.arch.empty() ? qs(d.kind) : QStringLiteral("%1:%2").arg(qs(d.kind), qs(d.arch));
        m_target->addItem(tr("%1 — %2 (this machine)").arg(qs(d.id), qs(d.name)), t);
    }
    m_target->insertSeparator(m_target->count());
    for (const auto& t : whatIfTargets())
        m_target->addItem(tr("%1 (what if)").arg(t), t);
    int i = current.isEmpty() ? -1 : m_target->findData(current);
    for (int j = 0; i < 0 && j < m_target->count(); ++j)
        if (!m_target->itemData(j).toString().isEmpty())
            i = j;
    m_target->setCurrentIndex(i);
    if (m_op.isEmpty() && m_model->rowCount() > 0)
        m_op = m_model->opAt(0);
    m_model->setSelectedOp(m_op);
}

QString KernelMatrixView::target() const {
    return m_target->currentData().toString();
}

void KernelMatrixView::setTarget(const QString& target) {
    int i = m_target->findData(target);
    if (i < 0) {
        m_target->addItem(tr("%1 (what if)").arg(target), target);
        i = m_target->count() - 1;
    }
    if (i == m_target->currentIndex())
        emit targetChanged(target);
    else
        m_target->setCurrentIndex(i);
}

void KernelMatrixView::setResolution(TargetResolutionPtr resolution) {
    if (!resolution || resolution->target != target().toStdString())
        return; // an answer for a target no longer selected
    m_model->setResolution(std::move(resolution));
    updateChain();
}

void KernelMatrixView::setResolutionError(const QString& t, const QString& error) {
    if (t != target())
        return;
    m_summary->setText(tr("Cannot resolve for %1: %2").arg(t, error));
    m_chain->setResolution(std::nullopt);
}

void KernelMatrixView::setSelectedOp(const QString& op) {
    if (op.isEmpty())
        return;
    m_op = op;
    m_model->setSelectedOp(op);
    updateChain();
}

void KernelMatrixView::updateChain() {
    const auto& res = m_model->resolution();
    const Resolution* r = res ? res->find(m_op.toStdString()) : nullptr;
    m_chain->setResolution(r ? std::optional<Resolution>(*r) : std::nullopt);
    if (!r) {
        m_summary->setText(m_op.isEmpty() ? tr("Select an op (a row) to see its fallback chain.")
                                          : tr("Resolving %1…").arg(m_op));
        return;
    }
    scrollToChain();
    QString s =
        tr("<b>%1</b> on <b>%2</b>: ").arg(m_op.toHtmlEscaped(), qs(res->target).toHtmlEscaped());
    if (r->winner)
        s += tr("rung %1 wins, %2 from %3")
                 .arg(*r->winner + 1)
                 .arg(qs(r->rungs[*r->winner].key.to_string()).toHtmlEscaped(),
                      qs(r->rungs[*r->winner].backend).toHtmlEscaped());
    else
        s += tr("nothing in the chain is available here");
    if (r->first_declared && (!r->winner || *r->first_declared != *r->winner))
        s += tr("; on hardware that has it, rung %1 would win").arg(*r->first_declared + 1);
    m_summary->setText(s);
}

} // namespace switchyard::ui

namespace switchyard::ui {

void KernelMatrixView::scrollToChain() {
    // Bring the chain's first rung into view (what-if targets sit right of the CPU columns).
    const auto& res = m_model->resolution();
    const Resolution* r = res ? res->find(m_op.toStdString()) : nullptr;
    const int row = m_model->rowOfOp(m_op);
    if (!r || row < 0 || r->rungs.empty())
        return;
    const auto& key = r->rungs.front().key;
    const int col = m_model->columnOf(key[1], key[2], key[3]);
    if (col >= 0)
        m_table->scrollTo(m_model->index(row, col), QAbstractItemView::PositionAtCenter);
}

void KernelMatrixView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    QTimer::singleShot(0, this, &KernelMatrixView::scrollToChain);
}

} // namespace switchyard::ui

namespace switchyard::ui {

// The profiler's entry point: right-click a cell or an op, then "Profile".
void KernelMatrixView::setupProfileMenus() {
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = m_table->indexAt(pos);
        if (!index.isValid())
            return;
        std::unique_ptr<QMenu> menu(profileMenu(index.row(), index.column(), this));
        menu->exec(m_table->viewport()->mapToGlobal(pos));
    });
    m_table->verticalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table->verticalHeader(), &QWidget::customContextMenuRequested, this,
            [this](const QPoint& pos) {
                const int row = m_table->verticalHeader()->logicalIndexAt(pos);
                if (row < 0)
                    return;
                std::unique_ptr<QMenu> menu(profileMenu(row, -1, this));
                menu->exec(m_table->verticalHeader()->mapToGlobal(pos));
            });
}

QMenu* KernelMatrixView::profileMenu(int row, int column, QWidget* parent) {
    auto* menu = new QMenu(parent);
    const QString op = m_model->opAt(row);
    QString device;
    if (column >= 0) {
        // KeyRole reads "(op, device, arch, variant)".
        const auto parts = m_model->index(row, column)
                               .data(KernelMatrixModel::KeyRole)
                               .toString()
                               .mid(1)
                               .chopped(1)
                               .split(QStringLiteral(", "));
        device = parts.value(1);
    }
    auto add = [&](const QString& text, const QStringList& devices, bool all) {
        menu->addAction(text, this,
                        [this, op, devices, all] { emit profileRequested({op}, devices, all); });
    };
    if (!device.isEmpty()) {
        add(tr("Profile %1 on %2 (resolved cell)").arg(op, device), {device}, false);
        add(tr("Profile %1 on %2, all variants").arg(op, device), {device}, true);
    }
    add(tr("Profile %1 on every device").arg(op), {}, false);
    add(tr("Profile %1 on every device, all variants").arg(op), {}, true);
    return menu;
}

} // namespace switchyard::ui

// SPDX-License-Identifier: MIT
#pragma once

#include "models/catalog.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QMenu;
class QTableView;

namespace switchyard::ui {

class ChainModel;
class KernelMatrixModel;

/// The kernel matrix with its target selector and the selected op's fallback chain.
class KernelMatrixView : public QWidget {
    Q_OBJECT
public:
    explicit KernelMatrixView(QWidget* parent = nullptr);

    void setResults(const CatalogPtr& catalog);
    void setResolution(TargetResolutionPtr resolution);
    void setResolutionError(const QString& target, const QString& error);
    /// Selects `target` in the selector (added when not listed); emits targetChanged.
    void setTarget(const QString& target);
    QString target() const;
    void setSelectedOp(const QString& op);
    QString selectedOp() const { return m_op; }

    KernelMatrixModel* model() const { return m_model; }
    ChainModel* chainModel() const { return m_chain; }

    /// What-if targets offered besides the detected devices.
    static QStringList whatIfTargets();
    /// The context menu of a cell or an op (`index` in column -1: the op's header):
    /// "Profile…" actions that emit profileRequested. The caller owns the menu.
    QMenu* profileMenu(int row, int column, QWidget* parent = nullptr);

signals:
    void targetChanged(const QString& target);
    /// "Profile" from the context menu: ops, device kinds (empty: every device), and
    /// whether every variant runs or only the resolved cell.
    void profileRequested(const QStringList& ops, const QStringList& devices, bool allVariants);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void updateChain();
    void setupProfileMenus();
    void scrollToChain();

    KernelMatrixModel* m_model;
    ChainModel* m_chain;
    QComboBox* m_target;
    QLabel* m_summary;
    QTableView* m_table;
    QTableView* m_chainTable;
    QString m_op;
};

} // namespace switchyard::ui

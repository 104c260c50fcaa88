// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/catalogcontroller.h"

#include <QWidget>

class QComboBox;
class QLabel;
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
    QTableView* tableView() const { return m_table; }
    QComboBox* targetBox() const { return m_target; }

    /// What-if targets offered besides the detected devices.
    static QStringList whatIfTargets();

signals:
    void targetChanged(const QString& target);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void updateChain();
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

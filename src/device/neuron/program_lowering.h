// Lowering a compiled graph (opscope::ProgramGraph, device.h) to one program for the simulated
// NeuronCore: what NeuronBackend::BuildProgram runs for compile().
//
// Each fused kernel becomes the instructions a hand-fused NKI kernel would issue over the
// device's 2-D view ([outer rows over partitions, reduced/innermost extent along the free dim]):
//   - one VectorE row reduction per reduction (its element-level producers fused into it:
//     tensor_tensor_reduce / tensor_reduce),
//   - one ScalarE activation per run of row-level pointwise ops ([rows, 1]),
//   - one VectorE elementwise pass per element-level output (tensor_tensor /
//     scalar_tensor_tensor), reading the inputs and the row values.
// Graph inputs and outputs live in HBM (moved by DMA); every other value stays in SBUF for the
// program's duration. The whole graph is one Program, so one call is one nrta_execute_schedule
// and one nc_exec_running.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_LOWERING_H_
#define OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_LOWERING_H_

#include <string>

#include "device/neuron/program.h"
#include "opscope/device.h"

namespace opscope::neuron {

// The device program for `graph` (its compute is left empty for the caller to set). Throws
// std::invalid_argument for a value that is not a pointwise op or reduction of the registry.
Program LowerProgramGraph(const ProgramGraph& graph, const std::string& name);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_LOWERING_H_

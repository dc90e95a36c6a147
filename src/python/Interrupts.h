/// Ctrl-C during a long call that runs without the GIL: the call checks at its safe points
/// (after a trial is logged, between two runs of a module) whether Python received a signal,
/// taking the GIL for the moment of the check. Python's SIGINT handler only sets a flag while C++
/// runs; PyErr_CheckSignals runs it, which raises KeyboardInterrupt, and the check throws that
/// as a C++ exception, so the call unwinds cleanly (workers stopped, temporaries removed, the
/// log ending at the last whole trial) and Python sees KeyboardInterrupt when it returns.
#pragma once
#include <pybind11/pybind11.h>

namespace tessel::python {

/// Throws pybind11::error_already_set when a signal handler raised (KeyboardInterrupt).
/// Call it without the GIL held.
inline void checkInterruptsWithoutGil() {
  pybind11::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
}

}  // namespace tessel::python

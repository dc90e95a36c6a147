// tessel::Error as tessel.TesselError, a RuntimeError carrying the error's message unchanged.
#include "python/Bindings.h"
#include "support/Error.h"

namespace tessel::python {

void bindErrors(pybind11::module_& m) { pybind11::register_exception<tessel::Error>(m, "TesselError", PyExc_RuntimeError); }

}  // namespace tessel::python

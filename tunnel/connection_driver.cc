#include "tunnel/connection_driver.h"

namespace egw::tunnel {

// The one instantiation for the product's connection; fakes in unit tests
// instantiate the header's template themselves.
template class BasicConnectionDriver<Connection>;

}  // namespace egw::tunnel

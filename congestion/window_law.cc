#include "congestion/window_law.h"

#include "congestion/cubic.h"
#include "congestion/ensemble.h"
#include "congestion/model_law.h"
#include "congestion/newreno.h"

namespace egw::congestion {

std::unique_ptr<WindowLaw> make_window_law(WindowLawKind kind, const WindowLawParams& params) {
  switch (kind) {
    case WindowLawKind::cubic: return std::make_unique<Cubic>(params);
    case WindowLawKind::model: return std::make_unique<ModelLaw>(params);
    case WindowLawKind::newreno: break;
  }
  return std::make_unique<NewReno>(params);
}

}  // namespace egw::congestion

// The real-traffic suites run over each window law the product may run: the
// core's default (NewReno, the papers' simulator) and the gateway's default
// (the model law). INSTANTIATE_TEST_SUITE_P(Laws, Suite, kBothLaws, law_param_name)
// gives Laws/Suite.Test/newreno and .../model.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "congestion/ensemble_config.h"
#include "tests/scenarios/model_law_experiment.h"

namespace egw::scenarios {

inline const auto kBothLaws =
    ::testing::Values(congestion::WindowLawKind::newreno, congestion::WindowLawKind::model);

inline std::string law_param_name(const ::testing::TestParamInfo<congestion::WindowLawKind>& info) {
  return law_name(info.param);
}

}  // namespace egw::scenarios

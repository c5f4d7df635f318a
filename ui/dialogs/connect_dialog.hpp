#pragma once
// [SECTION] File > Connect to engine...: a command that reaches `tilescope serve` (ssh, srun, docker exec,
// kubectl exec), an optional name, the engines connected now (choose, close) and the remembered ones
// (connect, forget). It edits AppState::connect and the settings' list, and asks rq::ConnectEngine,
// rq::ChooseEngine and rq::DisconnectEngine.
#include "ui/app_state.hpp"

namespace ts::ui {

void draw_connect_dialog(AppState& s);

}  // namespace ts::ui

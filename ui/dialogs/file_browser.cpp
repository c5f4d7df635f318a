#include "ui/dialogs/file_browser.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <system_error>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/io/files.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// A small folder or page drawn in front of a name, in the text's colour (no icon font needed).
void entry_icon(bool folder) {
  const float h = ImGui::GetTextLineHeight(), w = h * 1.1f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 col =
      ImGui::GetColorU32(folder ? palette().accent : ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  if (folder) {
    dl->AddRectFilled(ImVec2(p.x + 1, p.y + h * 0.18f), ImVec2(p.x + w * 0.45f, p.y + h * 0.34f), col, 1.5f);
    dl->AddRectFilled(ImVec2(p.x + 1, p.y + h * 0.3f), ImVec2(p.x + w - 2, p.y + h * 0.86f), col, 2.0f);
  } else {
    const float x0 = p.x + w * 0.18f, x1 = p.x + w * 0.78f, y0 = p.y + h * 0.12f, y1 = p.y + h * 0.9f;
    const float fold = (x1 - x0) * 0.35f;
    const ImVec2 pts[] = {{x0, y0}, {x1 - fold, y0}, {x1, y0 + fold}, {x1, y1}, {x0, y1}};
    dl->AddPolyline(pts, 5, col, ImDrawFlags_Closed, 1.2f);
  }
  ImGui::Dummy(ImVec2(w, h));
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
}

}  // namespace

void FileBrowser::open(const std::string& key, const std::string& title, Mode mode,
                       std::vector<FileType> types, const std::string& name) {
  m_open = true;
  m_popup_opened = false;
  m_key = key;
  m_title = title;
  m_window = title + "###" + key;
  m_mode = mode;
  m_types = std::move(types);
  if (m_types.empty()) m_types.push_back({"All files", {}});
  m_type = 0;
  m_name = name;
  m_error.clear();
  m_selected.clear();
  m_popup_above = false;
  m_focus_name = true;
  std::error_code ec;
  if (m_started_in.empty()) m_started_in = fs::current_path(ec);
  m_places = places(m_started_in);
  if (m_folder.empty() || !fs::is_directory(m_folder, ec))
    m_folder = m_started_in.empty() ? "/" : m_started_in;
  go(m_folder);
}

void FileBrowser::go(const fs::path& folder) {
  m_folder = folder.lexically_normal();
  if (m_folder.has_relative_path() && m_folder.filename().empty())
    m_folder = m_folder.parent_path();  // "a/b/"
  m_selected.clear();
  m_error.clear();
  m_listing = list_folder(m_folder);
  refresh();
}

void FileBrowser::refresh() {
  m_shown.clear();
  const FileType& t = m_types[size_t(m_type)];
  for (size_t i = 0; i < m_listing.entries.size(); ++i) {
    const FolderEntry& e = m_listing.entries[i];
    if ((m_show_hidden || !e.hidden()) && t.matches(e)) m_shown.push_back(i);
  }
}

bool FileBrowser::accept(fs::path* path) {
  m_error.clear();
  std::string typed = m_name;
  if (typed.empty() && !m_selected.empty()) typed = m_selected;
  if (typed.empty()) {
    m_error = m_mode == Mode::Save ? "type a name for the file" : "choose a file";
    return false;
  }
  const fs::path p = resolve_typed(m_folder, typed);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {  // a folder: go into it, as a desktop dialog does
    go(p);
    m_name.clear();
    return false;
  }
  if (m_mode == Mode::Open) {
    if (!fs::exists(fs::symlink_status(p, ec))) {
      m_error = "there is no " + p.filename().string() + " in " + p.parent_path().string();
      return false;
    }
  } else {
    if (p.filename().empty() || !fs::is_directory(p.parent_path(), ec)) {
      m_error = "there is no folder " + p.parent_path().string();
      return false;
    }
  }
  m_folder = p.parent_path();  // the next dialog starts here
  *path = p;
  return true;
}

void FileBrowser::path_bar(float width) {
  // The folder as a row of buttons, from "/" down; the leading ones give way when the row is too long.
  std::vector<fs::path> parts;
  for (fs::path p = m_folder;; p = p.parent_path()) {
    parts.push_back(p);
    if (p == p.root_path() || !p.has_relative_path() || p.parent_path() == p) break;
  }
  std::reverse(parts.begin(), parts.end());
  const ImGuiStyle& st = ImGui::GetStyle();
  auto label_of = [](const fs::path& p) {
    const std::string n = p.filename().string();
    return n.empty() ? p.string() : n;
  };
  auto button_w = [&](const std::string& l) {
    return ImGui::CalcTextSize(l.c_str()).x + st.FramePadding.x * 2;
  };
  size_t first = 0;
  float total = 0;
  for (const auto& p : parts) total += button_w(label_of(p)) + st.ItemSpacing.x * 0.5f;
  const float more_w = button_w("<") + st.ItemSpacing.x * 0.5f;
  while (first + 1 < parts.size() && total + (first > 0 ? more_w : 0) > width) {
    total -= button_w(label_of(parts[first])) + st.ItemSpacing.x * 0.5f;
    ++first;
  }
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(st.ItemSpacing.x * 0.5f, st.ItemSpacing.y));
  std::optional<fs::path> to;
  if (first > 0) {
    if (ImGui::Button("<")) to = parts[first - 1];
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", parts[first - 1].string().c_str());
    ImGui::SameLine();
  }
  for (size_t i = first; i < parts.size(); ++i) {
    const std::string l = label_of(parts[i]);
    const bool current = i + 1 == parts.size();
    ImGui::PushID(int(i));
    if (current) ImGui::PushStyleColor(ImGuiCol_Button, st.Colors[ImGuiCol_Header]);
    if (ImGui::Button(l.c_str()) && !current) to = parts[i];
    if (current) ImGui::PopStyleColor();
    ImGui::PopID();
    if (i + 1 < parts.size()) ImGui::SameLine();
  }
  ImGui::PopStyleVar();
  if (to) go(*to);
}

FileBrowser::Outcome FileBrowser::draw(fs::path* path, FileDialogReport* report) {
  if (!m_open) return Outcome::Showing;
  FileDialogReport r;
  r.open = true;
  r.title = m_title;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float em = ImGui::GetFontSize();
  if (!m_popup_opened) {
    ImGui::OpenPopup(m_window.c_str());
    m_popup_opened = true;
  }
  ImGui::SetNextWindowPos(
      ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
      ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(
      ImVec2(std::min(vp->WorkSize.x * 0.9f, em * 52), std::min(vp->WorkSize.y * 0.85f, em * 30)),
      ImGuiCond_Appearing);
  bool keep = true;
  Outcome out = Outcome::Showing;
  if (!ImGui::BeginPopupModal(m_window.c_str(), &keep,
                              ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollbar |
                                  ImGuiWindowFlags_NoScrollWithMouse)) {
    m_open = false;  // closed by its title bar's button
    if (report) *report = FileDialogReport{};
    return Outcome::Cancelled;
  }
  const ImGuiStyle& st = ImGui::GetStyle();
  const ImGuiIO& io = ImGui::GetIO();
  const bool escape = ImGui::IsKeyPressed(ImGuiKey_Escape, false);
  const bool escape_for_popup = escape && m_popup_above;  // the type list was open: Escape closes only it

  // [SECTION] The folder: parent, then its path as buttons.
  if (ImGui::ArrowButton("##up", ImGuiDir_Up) || (io.KeyAlt && ImGui::IsKeyPressed(ImGuiKey_UpArrow)))
    if (m_folder.has_relative_path()) go(m_folder.parent_path());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The folder above (Alt+Up)");
  ImGui::SameLine();
  path_bar(ImGui::GetContentRegionAvail().x);
  r.folder = m_folder.string();

  // [SECTION] Places | the folder's entries.
  // Heights are explicit: inside a table cell, "fill the rest" would reach the window's bottom edge.
  const float body_h =
      std::max(em * 4, ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing() * 2 -
                           st.ItemSpacing.y - st.CellPadding.y * 2);
  if (ImGui::BeginTable("##body", 2, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV,
                        ImVec2(0, body_h + st.CellPadding.y * 2))) {
    ImGui::TableSetupColumn("places", ImGuiTableColumnFlags_WidthFixed, em * 8.5f);
    ImGui::TableSetupColumn("entries", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::BeginChild("##places", ImVec2(0, body_h));
    for (const Place& p : m_places) {
      r.places.push_back(p.label);
      if (ImGui::Selectable(p.label.c_str(), p.path == m_folder)) go(p.path);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.path.string().c_str());
    }
    ImGui::EndChild();
    ImGui::TableNextColumn();
    const float top = ImGui::GetCursorScreenPos().y;
    if (!m_listing.error.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "Cannot read %s: %s", m_folder.string().c_str(),
                         m_listing.error.c_str());
      ImGui::PopTextWrapPos();
      r.error = m_listing.error;
    }
    const int64_t now = int64_t(std::time(nullptr));
    if (ImGui::BeginTable("##entries", 3,
                          ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit,
                          ImVec2(0, std::max(em * 3, body_h - (ImGui::GetCursorScreenPos().y - top))))) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, em * 5.5f);
      ImGui::TableSetupColumn("Modified", ImGuiTableColumnFlags_WidthFixed, em * 6.5f);
      ImGui::TableHeadersRow();
      std::optional<fs::path> into;
      bool choose = false;
      ImGuiListClipper clip;
      clip.Begin(int(m_shown.size()));
      while (clip.Step())
        for (int row = clip.DisplayStart; row < clip.DisplayEnd; ++row) {
          const FolderEntry& e = m_listing.entries[m_shown[size_t(row)]];
          const bool folder = e.kind == FolderEntry::Kind::Folder;
          FileDialogReport::Row rr;
          rr.name = e.name;
          rr.folder = folder;
          rr.size = e.size ? format_bytes(double(*e.size)) : "";  // a folder has no size of its own
          rr.modified = format_modified(e.modified, now);
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::PushID(row);
          entry_icon(folder);
          if (ImGui::Selectable(
                  e.name.c_str(), m_selected == e.name,
                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
            m_selected = e.name;
            m_error.clear();
            if (!folder) m_name = e.name;
            if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) || ImGui::IsKeyPressed(ImGuiKey_Enter)) {
              if (folder)
                into = m_folder / e.name;
              else
                choose = true;
            }
          }
          ImGui::PopID();
          ImGui::TableNextColumn();
          if (!rr.size.empty()) {  // right-aligned, as file managers do
            ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x -
                                 ImGui::CalcTextSize(rr.size.c_str()).x);
            ImGui::TextUnformatted(rr.size.c_str());
          }
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(rr.modified.c_str());
          r.rows.push_back(std::move(rr));
        }
      if (m_listing.truncated) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("(only the first %zu entries are listed)", m_listing.entries.size());
      }
      ImGui::EndTable();
      if (into) {
        go(*into);
        m_name.clear();
      } else if (choose && accept(path)) {
        out = Outcome::Chosen;
      }
    }
    ImGui::EndTable();
  }

  // [SECTION] Name and type; hidden files; Cancel and Open / Save.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Name");
  ImGui::SameLine();
  const float type_w = std::min(em * 14, ImGui::GetContentRegionAvail().x * 0.4f);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - type_w - st.ItemSpacing.x);
  if (m_focus_name) {
    ImGui::SetKeyboardFocusHere();
    m_focus_name = false;
  }
  if (ImGui::InputText("##name", &m_name, ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (accept(path)) out = Outcome::Chosen;
    m_focus_name = out != Outcome::Chosen;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A name in this folder, or a path: ~/data/a.npy, /tmp, sub/ (Enter opens a folder)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(type_w);
  for (const FileType& t : m_types) r.types.push_back(t.label);
  r.type = m_types[size_t(m_type)].label;
  if (ImGui::BeginCombo("##type", m_types[size_t(m_type)].label.c_str())) {
    if (escape_for_popup) ImGui::CloseCurrentPopup();
    for (int i = 0; i < int(m_types.size()); ++i)
      if (ImGui::Selectable(m_types[size_t(i)].label.c_str(), i == m_type)) {
        m_type = i;
        refresh();
      }
    ImGui::EndCombo();
  }
  const float line_right = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x;
  if (ImGui::Checkbox("Show hidden files", &m_show_hidden)) refresh();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Files and folders whose name starts with a dot (Ctrl+H)");
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGuiKey_H, false)) {
    m_show_hidden = !m_show_hidden;
    refresh();
  }
  if (!m_error.empty()) {
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(palette().bad, "%s", m_error.c_str());
  }
  r.error = r.error.empty() ? m_error : r.error;
  const char* action = m_mode == Mode::Save ? "Save" : "Open";
  const float buttons = ImGui::CalcTextSize("Cancel").x + ImGui::CalcTextSize(action).x +
                        st.FramePadding.x * 4 + st.ItemSpacing.x * 2 + em * 2;
  ImGui::SameLine();
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), line_right - buttons));
  bool cancel = false;
  if (ImGui::Button("Cancel", ImVec2(ImGui::CalcTextSize("Cancel").x + st.FramePadding.x * 2 + em, 0)))
    cancel = true;
  ImGui::SameLine();
  if (ImGui::Button(action, ImVec2(ImGui::CalcTextSize(action).x + st.FramePadding.x * 2 + em, 0)) &&
      out != Outcome::Chosen && accept(path))
    out = Outcome::Chosen;
  r.name = m_name;

  m_popup_above = ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId);
  if (escape && !escape_for_popup) cancel = true;
  if (cancel && out != Outcome::Chosen) out = Outcome::Cancelled;
  if (out != Outcome::Showing) {
    ImGui::CloseCurrentPopup();
    m_open = false;
    r = FileDialogReport{};
  }
  ImGui::EndPopup();
  if (report) *report = std::move(r);
  return out;
}

}  // namespace ts::ui

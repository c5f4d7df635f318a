#pragma once
// [SECTION] The open and save dialog drawn inside the window, for where the desktop offers none of its own
// (file_dialogs.hpp decides). It looks and acts like a Linux file dialog: places on the left (Home, Desktop,
// Documents, Downloads, the folder TileScope was started in, File system), the folder as a row of buttons,
// its folders then its files with their size (none for a folder) and time of change, hidden files only on
// Ctrl+H, a name field that also takes a path ("~/data/a.npy", "/tmp", "sub/"), the file type list, Cancel
// and Open / Save. Double-click or Enter opens a folder or chooses a file; Alt+Up goes to the parent folder;
// Escape closes the type list when it is open, else cancels the dialog. It never changes a file: choosing
// hands the path back to the caller, who checks it before anything is read or written.
// (ImFileDialog, which the window used before, shows Windows' words and a size for every folder, and closes
// itself on an Escape meant for its type list: none of that can be configured from outside it.)
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ui/app_state.hpp"
#include "core/io/folder_listing.hpp"
#include "ui/frame_report.hpp"

namespace ts::ui {

class FileBrowser {
 public:
  enum class Mode { Open, Save };
  // Starts a dialog (one at a time): `key` names its window ("<title>###<key>"); `name` fills the name field.
  void open(const std::string& key, const std::string& title, Mode mode, std::vector<FileType> types,
            const std::string& name = "");
  bool is_open() const { return m_open; }

  enum class Outcome { Showing, Chosen, Cancelled };
  // Between NewFrame() and Render(): draws the dialog. Chosen: *path holds the choice (the dialog closed).
  // `report` receives what it drew (for the UI tests).
  Outcome draw(std::filesystem::path* path, FileDialogReport* report);

 private:
  void go(const std::filesystem::path& folder);
  void refresh();
  bool accept(std::filesystem::path* path);  // the name field's text: into a folder, or a choice
  void path_bar(float width);

  bool m_open = false, m_popup_opened = false;
  std::string m_key, m_title, m_window;
  Mode m_mode = Mode::Open;
  std::vector<FileType> m_types;
  int m_type = 0;
  std::filesystem::path m_folder;  // kept from one dialog to the next, as a desktop dialog does
  std::filesystem::path m_started_in;
  std::vector<Place> m_places;  // read when a dialog opens
  FolderListing m_listing;
  std::vector<size_t> m_shown;  // indices into m_listing.entries that pass the type and hidden filters
  std::string m_selected;       // a name in m_folder
  std::string m_name;           // the name field
  std::string m_error;          // why the last Open / Save did not choose anything
  bool m_show_hidden = false;
  bool m_popup_above = false;  // a popup of the dialog (the type list) was open at the end of the last frame
  bool m_focus_name = false;
};

}  // namespace ts::ui

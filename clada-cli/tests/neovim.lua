-- Drives `clada lsp` from a headless Neovim (0.7 API), configured by the
-- README's snippet (loaded as init.lua), for clada-cli/tests/neovim.rs.
-- Writes what the editor received as JSON to $CLADA_NVIM_OUT, then quits.

local out = {}

local function wait_for(what, ms, f)
  if not vim.wait(ms, f, 20) then
    error("timed out waiting for " .. what)
  end
end

local function diagnostics(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, {
      lnum = d.lnum,
      col = d.col,
      severity = d.severity,
      code = d.code,
      source = d.source,
      message = d.message,
    })
  end
  table.sort(list, function(a, b) return a.lnum < b.lnum end)
  return list
end

local function client_of(buf)
  for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
    if c.name == "clada" then
      return c
    end
  end
end

local function run()
  vim.cmd("edit reply.md")
  local buf = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[buf].filetype
  wait_for("the client to attach", 10000, function() return client_of(buf) ~= nil end)
  wait_for("the client to initialize", 10000, function()
    return client_of(buf).initialized
  end)
  -- The near miss at once; the task that would fail once the document settles.
  wait_for("a warning", 10000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity == vim.diagnostic.severity.WARN then
        return true
      end
    end
    return false
  end)
  out.diagnostics = diagnostics(buf)

  vim.api.nvim_win_set_cursor(0, { 3, 2 })
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover",
    vim.lsp.util.make_position_params(), 5000)
  for _, r in pairs(hover or {}) do
    if r.result then
      out.hover = r.result.contents.value
    end
  end

  local symbols = vim.lsp.buf_request_sync(buf, "textDocument/documentSymbol",
    { textDocument = vim.lsp.util.make_text_document_params() }, 5000)
  out.symbols = {}
  for _, r in pairs(symbols or {}) do
    for _, s in ipairs(r.result or {}) do
      table.insert(out.symbols, s.name)
    end
  end

  -- A `.clada` file: its file type from the snippet, the same client.
  vim.cmd("edit tasks.clada")
  local clada = vim.api.nvim_get_current_buf()
  out.clada_filetype = vim.bo[clada].filetype
  wait_for("the .clada file's diagnostics", 10000, function()
    return #vim.diagnostic.get(clada) > 0
  end)
  out.clada_diagnostics = diagnostics(clada)
  out.clients = #vim.lsp.get_active_clients()

  -- Closing, with requests around `shutdown`: the hover sent before it is
  -- answered, the one sent after is refused, and `exit` ends the server
  -- with status 0.
  local client = client_of(clada)
  local closing = {}
  client.config.on_exit = function(code) closing.exit_code = code end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(clada) },
    position = { line = 0, character = 2 },
  }
  local function outcome(err) return err and err.code or "answered" end
  client.rpc.request("textDocument/hover", params, function(err)
    closing.before = outcome(err)
  end)
  client.rpc.request("shutdown", nil, function(err)
    closing.shutdown = outcome(err)
    client.rpc.request("textDocument/hover", params, function(err2)
      closing.after = outcome(err2)
      client.rpc.notify("exit")
    end)
  end)
  wait_for("the server to exit", 10000, function() return closing.exit_code ~= nil end)
  out.closing = closing
end

local ok, err = pcall(run)
if not ok then
  out.error = tostring(err)
end
local f = assert(io.open(os.getenv("CLADA_NVIM_OUT"), "w"))
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd("qa!")

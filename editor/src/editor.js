/* The Workbench's code editor: CodeMirror 6 as a Streamlit v2 component (editor/__init__.py mounts it).

   What the server sends (`data`):
     source      the text to show when `doc_id` is new (a starter picked, a file uploaded)
     doc_id      names that text: the editor replaces what it holds only when it changes, so a rerun never
                 overwrites what the learner is typing
     markers     [{line, message}]: errors at their line (a gutter mark, the line underlined, the message on hover)
     marker_id   names those markers: they are set again only when it changes (the editor maps them through
                 the learner's edits meanwhile)
     height      the editor's height in pixels
     label       the editor's accessible name
   What it sends back: the state `source`, the whole text, 400 ms after the learner stops typing and when the
   editor loses focus.

   Autocompletion and closing brackets are left out: what a learner types is what the file holds. The editor is
   kept on the window, as the stage player is: a rerun that mounts the component in a new element moves it there,
   keeping its undo history and selection. */

import {defaultKeymap, history, historyKeymap, indentWithTab} from '@codemirror/commands';
import {python} from '@codemirror/lang-python';
import {bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting} from '@codemirror/language';
import {lintGutter, setDiagnostics} from '@codemirror/lint';
import {EditorState} from '@codemirror/state';
import {
  drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers,
} from '@codemirror/view';

const REPORT_AFTER_MS = 400;

/* The markers as CodeMirror's diagnostics: each over its line's text (a line past the end marks the last). */
function diagnostics(doc, markers) {
  return (markers || []).map(marker => {
    const line = doc.line(Math.min(Math.max(1, marker.line | 0), doc.lines));
    return {from: line.from, to: line.to, severity: 'error', message: String(marker.message)};
  });
}

class Editor {
  constructor(data) {
    this.host = document.createElement('div');
    this.host.className = 'schedlab-editor';
    this.host.setAttribute('data-testid', 'schedlab-editor');
    this.docId = data.doc_id;
    this.markerId = null;
    this.timer = null;
    this.send = null;
    this.sent = data.source;
    this.view = new EditorView({
      parent: this.host,
      state: EditorState.create({doc: data.source, extensions: [
        lineNumbers(), highlightActiveLineGutter(), lintGutter(), history(), drawSelection(), indentOnInput(),
        syntaxHighlighting(defaultHighlightStyle, {fallback: true}), bracketMatching(), highlightActiveLine(),
        indentUnit.of('    '), EditorState.tabSize.of(4), python(),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.contentAttributes.of({'aria-label': data.label || 'code'}),
        EditorView.theme({'&': {height: `${data.height || 420}px`, fontSize: '14px'},
                          '.cm-scroller': {overflow: 'auto', fontFamily: 'ui-monospace, monospace'}}),
        EditorView.updateListener.of(update => { if (update.docChanged) this.changed(); }),
        EditorView.domEventHandlers({blur: () => { this.report(); }}),
      ]}),
    });
  }

  changed() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.report(), REPORT_AFTER_MS);
  }

  report() {
    clearTimeout(this.timer);
    const text = this.view.state.doc.toString();
    if (this.send && text !== this.sent) {
      this.sent = text;
      this.send('source', text);
    }
  }

  show(data) {
    if (data.doc_id !== this.docId) {
      this.docId = data.doc_id;
      this.sent = data.source;  // the server's own text, not to be sent back
      clearTimeout(this.timer);
      this.view.dispatch({changes: {from: 0, to: this.view.state.doc.length, insert: data.source}});
    }
    if (data.marker_id !== this.markerId) {
      this.markerId = data.marker_id;
      this.view.dispatch(setDiagnostics(this.view.state, diagnostics(this.view.state.doc, data.markers)));
    }
  }
}

export default function (component) {
  const {data, parentElement, setStateValue} = component;
  let editor = window.schedlabEditor;
  if (!editor) editor = window.schedlabEditor = new Editor(data);
  editor.send = setStateValue;
  if (editor.host.parentElement !== parentElement) parentElement.appendChild(editor.host);
  editor.show(data);
}

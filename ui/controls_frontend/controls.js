// The sidebar's controls as native inputs, one element for all of a page's (ui/controls.py).
//
// Drawn once from the page's description of its controls; a rerun's description updates the same
// inputs in place (values, what is enabled, help, captions), so focus and a drag in progress survive
// it. A change goes back as the trigger "set" ({key, value}: an option by its index); a button's
// press as the trigger "press" (its key). The server checks both and is the truth: its next
// description is what the inputs show.

const KINDS = {slider, number, select, radio, select_slider: selectSlider, multiselect};

function make(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name in node && !name.includes("-")) node[name] = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

// A slider's number as shown: at most six significant digits (its values are whole or short decimals).
function shown(value) {
  return Number.isInteger(value) || Math.abs(value) >= 1e-4 ? String(+value.toPrecision(6)) : value.toExponential();
}

// The head of a control: its label (for the input ``id``), the value shown beside it, its help.
function head(c, id, output) {
  const label = make("label", {htmlFor: id, class: "pz-label", text: c.label});
  const row = make("div", {class: "pz-head"}, label);
  if (output) row.append(output);
  const help = make("details", {class: "pz-help"},
    make("summary", {"aria-label": `About ${c.label}`, text: "?"}), make("p", {class: "pz-help-text"}));
  help.addEventListener("keydown", (event) => {  // Escape folds it, as a tooltip goes
    if (event.key === "Escape" && help.open) {
      help.open = false;
      help.querySelector("summary").focus();
    }
  });
  row.append(help);
  return {row, label, help};
}

// A range input, its value named beside the label and to a screen reader by ``name`` (of its value).
function range(id, send, name, bounds) {
  const input = make("input", {type: "range", id, ...bounds});
  const output = make("output", {htmlFor: id, class: "pz-value"});
  const say = () => { output.textContent = name(+input.value); input.setAttribute("aria-valuetext", output.textContent); };
  input.addEventListener("input", say);
  input.addEventListener("change", () => send(+input.value));
  return {input, output, set: (v) => { input.value = v; say(); }};
}

function slider(c, id, send) {
  return range(id, send, shown, {min: c.low, max: c.high, step: c.step ?? "any"});
}

// A select slider: a range over its options' indices, each named by its option.
function selectSlider(c, id, send) {
  return range(id, send, (i) => c.names[i], {min: 0, max: c.names.length - 1, step: 1});
}

function number(c, id, send) {
  const input = make("input", {type: "number", id, min: c.low, max: c.high, step: c.step ?? "any"});
  input.addEventListener("change", () => {
    const value = input.valueAsNumber;
    if (!Number.isFinite(value)) { input.value = input.dataset.value; return; }  // empty: as it was
    send(Math.min(c.high, Math.max(c.low, value)));
  });
  return {input, set: (v) => { input.value = v; input.dataset.value = v; }};
}

function select(c, id, send) {
  const input = make("select", {id});
  for (const name of c.names) input.add(new Option(name, name));  // its value the name, as it shows
  input.addEventListener("change", () => send(input.selectedIndex));
  return {input, set: (v) => { input.selectedIndex = v; }};
}

// Options as a group of boxes named by the control's label: radios (one) or checkboxes (at most ``c.most``).
function choices(c, id, type) {
  const boxes = c.names.map((name, i) => make("input", {type, name: id, value: String(i), id: `${id}-${i}`}));
  const input = make("div", {class: `pz-choices pz-${type}`, role: type === "radio" ? "radiogroup" : "group",
                             id, "aria-labelledby": `${id}-label`},
    ...boxes.map((box, i) => make("label", {class: "pz-choice"}, box, make("span", {text: c.names[i]}))));
  return {input, boxes};
}

function radio(c, id, send) {
  const group = choices(c, id, "radio");
  group.boxes.forEach((box, i) => box.addEventListener("change", () => box.checked && send(i)));
  return {input: group.input, boxes: group.boxes, set: (v) => group.boxes.forEach((b, i) => { b.checked = i === v; })};
}

function multiselect(c, id, send) {
  const group = choices(c, id, "checkbox");
  const limit = () => {
    const full = group.boxes.filter((b) => b.checked).length >= c.most;
    group.boxes.forEach((b) => { b.disabled = !c.enabled || (full && !b.checked); });
  };
  group.boxes.forEach((box) => box.addEventListener("change", () => {
    limit();
    send(group.boxes.flatMap((b, i) => (b.checked ? [i] : [])));
  }));
  return {input: group.input, boxes: group.boxes,
          set: (v) => { group.boxes.forEach((b, i) => { b.checked = v.includes(i); }); limit(); }};
}

// One control: its head, its input, its caption and its button; ``update`` shows a description of it.
function field(c, page, report) {
  const id = `pz-${page}-${c.key}`;
  const control = KINDS[c.kind](c, id, (value) => report("set", {key: c.key, value}));
  const grouped = Boolean(control.boxes);
  const parts = head(c, id, control.output);
  if (grouped) {  // a group is named by its label, which labels no single input
    parts.label.removeAttribute("for");
    parts.label.id = `${id}-label`;
  } else {
    control.input.setAttribute("aria-label", c.label);
  }
  const caption = make("p", {class: "pz-caption"});
  const wrap = make("div", {class: `pz-field pz-${c.kind}` + (c.half ? " pz-half" : "")},
                    parts.row, control.input, caption);
  let button = null;
  if (c.button) {
    button = make("button", {type: "button", class: "pz-button", text: c.button.label, title: c.button.help,
                             "data-button": c.button.key});
    button.addEventListener("click", () => report("press", c.button.key));
  }
  const update = (d) => {
    c.enabled = d.enabled;
    const help = d.help || "";
    parts.help.hidden = !help;
    parts.help.querySelector("p").textContent = help;
    if (grouped) {
      control.boxes.forEach((b) => { b.disabled = !d.enabled; });
      control.input.setAttribute("aria-disabled", String(!d.enabled));
    } else {
      control.input.disabled = !d.enabled;
    }
    // The input being changed keeps what the visitor is doing; the server's answer follows the change.
    if (!wrap.contains(document.activeElement) || !control.input.matches(":active")) control.set(d.value);
    caption.hidden = !d.caption;
    caption.textContent = d.caption || "";
    wrap.classList.toggle("pz-off", !d.enabled);
  };
  update(c);
  return {nodes: button ? [wrap, button] : [wrap], update};
}

// What fixes the inputs' structure: a description with another shape is drawn anew.
function shape(data) {
  return JSON.stringify(data.controls.map((c) => [c.key, c.kind, c.label, c.names, c.low, c.high, c.step,
                                                  c.group, c.half, c.button && c.button.key]));
}

function draw(parentElement, data, report) {
  const root = make("div", {class: "pz-controls"});
  const fields = new Map();
  let group = "";
  for (const c of data.controls) {
    if (c.group && c.group !== group) root.append(make("h3", {class: "pz-group", text: c.group}));
    group = c.group || group;
    const made = field({...c}, data.page, report);
    fields.set(c.key, made);
    root.append(...made.nodes);
  }
  parentElement.replaceChildren(root);
  return {shape: shape(data), fields, root};
}

export default function (component) {
  const {parentElement, data, setTriggerValue} = component;
  if (!data || !Array.isArray(data.controls)) return undefined;
  if (!document.getElementById("pz-controls-style")) document.head.append(make("style", {id: "pz-controls-style", text: CSS}));
  let drawn = parentElement.__polarizeControls;
  if (!drawn || drawn.shape !== shape(data) || !parentElement.contains(drawn.root)) {
    const report = (name, value) => drawn.report(name, value);  // this call's, whichever call drew
    drawn = parentElement.__polarizeControls = draw(parentElement, data, report);
  } else {
    for (const c of data.controls) drawn.fields.get(c.key).update(c);
  }
  drawn.report = setTriggerValue;
  return undefined;
}

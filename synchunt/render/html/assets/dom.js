// The one way page scripts build DOM nodes: attributes by setAttribute, text only through text nodes
// (textContent), so no string from a trace is ever parsed as HTML.
function el(tag, attrs) {
  var node = document.createElement(tag);
  var key;
  for (key in attrs || {}) {
    if (key === "text") node.textContent = attrs[key];
    else if (key === "cls") node.className = attrs[key];
    else node.setAttribute(key, attrs[key]);
  }
  for (var i = 2; i < arguments.length; i++) {
    var child = arguments[i];
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

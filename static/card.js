// The card form's little JavaScript (contract section 6). The pages work without it; it
// adds input formatting, the VISA hint, the countdown, progress polling and the messages to
// the embedding page: window.parent.postMessage({topic, data}, origin).
(function () {
  "use strict";
  // A logo that cannot be loaded (offline, a wrong URL) gives way to the merchant's name,
  // never a broken image.
  var logo = document.querySelector("img.logo");
  if (logo) {
    var byName = function () {
      var name = document.createElement("span");
      name.className = "merchant";
      name.textContent = logo.alt;
      if (logo.parentNode) logo.parentNode.replaceChild(name, logo);
    };
    if (logo.complete && logo.naturalWidth === 0) byName();
    else logo.addEventListener("error", byName);
  }
  var el = document.getElementById("card-config");
  if (!el) return;
  var cfg;
  try { cfg = JSON.parse(el.textContent); } catch (e) { return; }
  var texts = cfg.texts || {};

  // post sends a message to the embedding page, only to the origins the server allows.
  function post(msg) {
    if (!msg || window.parent === window || !cfg.targets) return;
    cfg.targets.forEach(function (origin) {
      try { window.parent.postMessage({ topic: msg.topic, data: msg.data }, origin); } catch (e) { /* not that origin */ }
    });
  }

  function digits(s) { return s.replace(/\D+/g, ""); }

  function form() {
    var pan = document.getElementById("pan");
    var badge = document.getElementById("pan-brand");
    var exp = document.getElementById("expiry");
    var cvv = document.getElementById("cvv");
    var f = document.getElementById("card-form");
    var submit = document.getElementById("submit");

    function brand() {
      var d = digits(pan.value);
      badge.classList.toggle("is-visa", d.charAt(0) === "4");
      badge.classList.toggle("is-other", d.length > 0 && d.charAt(0) !== "4");
      badge.textContent = d.length > 0 && d.charAt(0) !== "4" ? texts.notVisa : texts.visa;
    }
    if (pan) {
      pan.addEventListener("input", function () {
        var atEnd = pan.selectionStart === pan.value.length;
        var d = digits(pan.value).slice(0, 19);
        var grouped = d.replace(/(\d{4})(?=\d)/g, "$1 ");
        if (grouped !== pan.value) {
          pan.value = grouped;
          if (atEnd) pan.setSelectionRange(grouped.length, grouped.length);
        }
        brand();
      });
      brand();
    }
    if (exp) {
      exp.addEventListener("input", function (ev) {
        if (ev.inputType && ev.inputType.indexOf("delete") === 0) return;
        var d = digits(exp.value).slice(0, 4);
        if (d.length === 1 && d > "1") d = "0" + d;
        exp.value = d.length >= 2 ? d.slice(0, 2) + "/" + d.slice(2) : d;
      });
    }
    if (cvv) {
      cvv.addEventListener("input", function () { cvv.value = digits(cvv.value).slice(0, 3); });
    }

    // A card on file: the new card's fields only when "another card" is chosen.
    var radios = document.querySelectorAll("input[name=card][type=radio]");
    var fresh = document.getElementById("new-card");
    function choose() {
      var saved = document.querySelector("input[name=card][value=saved]:checked") !== null;
      fresh.hidden = saved;
      fresh.querySelectorAll("input").forEach(function (i) { i.disabled = saved; });
    }
    if (radios.length) {
      radios.forEach(function (r) { r.addEventListener("change", choose); });
      choose();
    }

    if (f && submit) {
      f.addEventListener("submit", function () {
        setTimeout(function () { submit.disabled = true; submit.textContent = texts.processing; }, 0);
      });
    }
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();

    // The countdown runs from page load on the time left the server gave.
    var clock = document.getElementById("countdown");
    var live = document.getElementById("timer-live");
    var deadline = Date.now() + (cfg.remainingMs || 0);
    var warned = false;
    function tick() {
      var left = Math.max(0, deadline - Date.now());
      var s = Math.ceil(left / 1000);
      clock.textContent = Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
      if (s <= 60 && !warned) {
        warned = true;
        clock.parentNode.classList.add("is-ending");
        if (live) live.textContent = texts.oneMinute;
      }
      if (left <= 0) {
        location.replace(cfg.selfUrl);
        return;
      }
      setTimeout(tick, Math.min(1000, left));
    }
    if (clock && cfg.remainingMs) tick();
  }

  // result polls the status while the payout is processing, then shows the outcome page,
  // which posts the message.
  function result() {
    if (cfg.message) { post(cfg.message); return; }
    if (!cfg.statusUrl) return;
    var delay = 700;
    function poll() {
      fetch(cfg.statusUrl, { cache: "no-store", credentials: "omit" })
        .then(function (r) { return r.ok || r.status === 404 ? r.json() : null; })
        .then(function (s) {
          // Final, or the link died meanwhile: the server renders what to show.
          if (s && s.final) { location.replace(cfg.selfUrl); return; }
          setTimeout(poll, delay);
        })
        .catch(function () { setTimeout(poll, 2000); });
    }
    setTimeout(poll, delay);
  }

  // expired tells the parent, then takes the top window to the merchant's timeoutUrl (a
  // browser may refuse a cross-origin frame this without a click: the link stays).
  function expired() {
    post(cfg.message);
    if (!cfg.timeoutUrl) return;
    setTimeout(function () {
      try { window.top.location.href = cfg.timeoutUrl; } catch (e) { /* the link remains */ }
    }, 1500);
  }

  switch (cfg.mode) {
    case "form": form(); break;
    case "static": { // a link's form or review: a failed submission's summary takes the focus
      var summary = document.getElementById("error-summary");
      if (summary) summary.focus();
      break;
    }
    case "result": result(); break;
    case "expired": expired(); break;
    case "locked": post(cfg.message); break;
  }
})();

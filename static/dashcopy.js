// The dashboard's one script, on a payout link's page only: a Copy button beside the
// link. Without it (no script, no clipboard) the link stays there to select and copy.
(function () {
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) {
      return;
    }
    var label = btn.textContent;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(src.value).then(function () {
        btn.textContent = btn.getAttribute("data-done");
        setTimeout(function () { btn.textContent = label; }, 2000);
      }, function () {
        src.select();
      });
    });
  });
})();

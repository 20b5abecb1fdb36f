// voyager-brain ui: the only script. Filters apply as soon as a choice changes; every
// page works without it (the forms have a submit button).
document.addEventListener("change", (event) => {
  const target = event.target;
  if (target instanceof HTMLSelectElement && target.classList.contains("autosubmit") && target.form) {
    target.form.submit();
  }
});

// The lobby's forms («Jugar ya», «Abrir mesa», «Mesa privada»): the table sizes offered follow the house rules
// chosen (Clásica 3–6, Indias 3–8…), and the line beside them says how long such a game lasts.  Both come from
// the words the server wrote for every rules key and the sizes it is played by (templates/games/_lobby.html's
// #game-lengths, games.templatetags.lobby).  The server checks the size again whatever is posted.
(function () {
  "use strict";
  var data = document.getElementById("game-lengths");
  if (!data) return;
  var lengths = JSON.parse(data.textContent);

  // The rules key the server reads from the form (games.web.views._rules): clasica, indias, bazas,
  // se-dobla:<schedule>[:frente].
  function rulesKey(form) {
    var preset = form.elements.rules.value;
    if (preset !== "se-dobla") return preset;
    var forehead = form.elements.forehead && form.elements.forehead.checked;
    return "se-dobla:" + form.elements.schedule.value + (forehead ? ":frente" : "");
  }

  // The size controls: the radios' labels, or the select's options.
  function sizeChoices(form) {
    var radios = form.querySelectorAll('input[type="radio"][name="size"]');
    if (radios.length) {
      return Array.prototype.map.call(radios, function (input) {
        return { value: Number(input.value), input: input, shown: input.closest("label") || input };
      });
    }
    var select = form.querySelector('select[name="size"]');
    if (!select) return [];
    return Array.prototype.map.call(select.options, function (option) {
      return { value: Number(option.value), input: option, shown: option };
    });
  }

  function chosen(choice) {
    return choice.input.tagName === "OPTION" ? choice.input.selected : choice.input.checked;
  }

  function choose(choice) {
    if (choice.input.tagName === "OPTION") choice.input.selected = true;
    else choice.input.checked = true;
  }

  function follow(form) {
    var byKey = lengths[rulesKey(form)] || {};
    var sizes = Object.keys(byKey).map(Number);
    if (!sizes.length) return;
    var low = Math.min.apply(null, sizes);
    var high = Math.max.apply(null, sizes);
    var choices = sizeChoices(form);
    var current = null;
    choices.forEach(function (choice) {
      var fits = sizes.indexOf(choice.value) >= 0;
      choice.input.disabled = !fits;
      choice.shown.hidden = !fits;
      if (chosen(choice)) current = choice;
    });
    // A size the new rules are not played by (or none) becomes the nearest one they are.
    if (!current || current.input.disabled) {
      var wanted = Math.min(Math.max(current ? current.value : 4, low), high);
      choices.forEach(function (choice) {
        if (choice.value === wanted) { choose(choice); current = choice; }
      });
    }
    var line = form.querySelector(".game-length");
    if (line) {
      var text = current ? byKey[String(current.value)] || "" : "";
      if (line.textContent !== text) line.textContent = text;
    }
  }

  document.querySelectorAll("form").forEach(function (form) {
    if (!form.elements.rules || !form.querySelector(".game-length")) return;
    form.addEventListener("change", function () { follow(form); });
    follow(form);
  });
})();

package keyword

import "strings"

// american returns w in American spelling when it is a common British
// spelling of a word (colour → color, organised → organized, centre →
// center, grey → gray, mum → mom), w otherwise: a question typed one way
// must find a memory written the other ("What colour do I like?", "My
// favorite color is blue."), which Snowball stems apart (colour, color;
// organis, organ). w is a lower-case word of ASCII letters. Snowball
// already meets the doubled consonants (travelling, traveling → travel;
// cancelled, canceled → cancel).
func american(w string) string {
	if a, ok := britishWords[w]; ok {
		return a
	}
	if len(w) < 5 {
		return w
	}
	// -our: colour, colours, coloured, colourful → color…
	if i := strings.Index(w, "our"); i > 0 {
		if a, ok := ourStems[w[:i+3]]; ok {
			return a + w[i+3:]
		}
	}
	// -ise: organise, organised, organising, organisation → -ize…, for
	// the stems that take it (not exercise, advise, surprise, promise).
	if i := strings.LastIndex(w, "is"); i > 0 && izeStems[w[:i]] {
		switch rest := w[i+2:]; rest {
		case "e", "ed", "es", "ing", "ation", "ations", "er", "ers", "able":
			return w[:i] + "iz" + rest
		}
	}
	return w
}

// britishWords are British spellings with no rule of ourStems or
// izeStems, and their American ones.
var britishWords = map[string]string{
	"grey": "gray", "greys": "grays", "greyish": "grayish",
	"mum": "mom", "mums": "moms",
	"programme": "program", "programmes": "programs",
	"jewellery": "jewelry", "aluminium": "aluminum",
	"licence": "license", "licences": "licenses", "defence": "defense", "defences": "defenses",
	"offence": "offense", "offences": "offenses", "pretence": "pretense",
	"practise": "practice", "practised": "practiced", "practises": "practices", "practising": "practicing",
	"analyse": "analyze", "analysed": "analyzed", "analysing": "analyzing",
	"paralyse": "paralyze", "paralysed": "paralyzed", "catalyse": "catalyze",
	"catalogue": "catalog", "catalogues": "catalogs", "catalogued": "cataloged",
	"dialogue": "dialog", "dialogues": "dialogs", "analogue": "analog",
	"centre": "center", "centres": "centers", "centred": "centered", "centring": "centering",
	"theatre": "theater", "theatres": "theaters", "metre": "meter", "metres": "meters",
	"kilometre": "kilometer", "kilometres": "kilometers", "centimetre": "centimeter", "centimetres": "centimeters",
	"millimetre": "millimeter", "millimetres": "millimeters", "litre": "liter", "litres": "liters",
	"fibre": "fiber", "fibres": "fibers", "calibre": "caliber", "sombre": "somber", "meagre": "meager",
	"pyjamas": "pajamas", "cosy": "cozy", "plough": "plow", "mould": "mold", "mouldy": "moldy",
	"sceptic": "skeptic", "sceptical": "skeptical", "scepticism": "skepticism",
	"paediatric": "pediatric", "paediatrician": "pediatrician", "manoeuvre": "maneuver", "manoeuvres": "maneuvers",
	"doughnut": "donut", "doughnuts": "donuts",
}

// ourStems are British -our stems and their American -or ones: a word
// that begins with one is spelt with the American stem (neighbourhood →
// neighborhood, favourite → favorite, labourer → laborer).
var ourStems = map[string]string{}

func init() {
	for _, s := range strings.Fields(`ardour armour behaviour candour clamour colour endeavour favour
		flavour glamour harbour honour humour labour neighbour odour parlour rigour rumour
		saviour savour splendour tumour valour vapour vigour`) {
		ourStems[s] = strings.TrimSuffix(s, "our") + "or"
	}
}

// izeStems are the stems spelt -ise in British English and -ize in
// American (organise, realise, recognise), before the suffix.
var izeStems = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`agon apolog author capital categor character civil critic
		custom digit dramat econom emphas energ equal familiar fantas final formal fossil general
		global harmon hospital human hypothes ideal immun initial jeopard legal legitim liber local
		magnet material maxim mechan memor minim mobil modern monet monopol moral motor national
		natural neutral normal optim organ patron penal personal polar popular priorit privat
		radical random rational real recogn revolution sanit scandal scrutin sensit social special
		stabil standard steril subsid summar symbol sympath synchron terror theor tranquil trivial
		urban util vandal verbal victim visual vocal`) {
		izeStems[s] = true
	}
}

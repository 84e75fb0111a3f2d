// Written by `npm run languages` (scripts/language-names.js): the language names ICU 78.3
// (CLDR 48.0) gives in English to the codes of two and of three letters, one "code name"
// a line, by the plain rule of languages.ts (icuLanguageNames). Do not edit; run the script again.
export const RECORDED = {
  icu: '78.3',
  cldr: '48.0',
  2: `aa Afar
ab Abkhazian
ae Avestan
af Afrikaans
ak Akan
am Amharic
an Aragonese
ar Arabic
as Assamese
av Avaric
ay Aymara
az Azerbaijani
ba Bashkir
be Belarusian
bg Bulgarian
bh Bhojpuri
bi Bislama
bm Bambara
bn Bangla
bo Tibetan
br Breton
bs Bosnian
ca Catalan
ce Chechen
ch Chamorro
co Corsican
cr Cree
cs Czech
cu Church Slavic
cv Chuvash
cy Welsh
da Danish
de German
dv Divehi
dz Dzongkha
ee Ewe
el Greek
en English
eo Esperanto
es Spanish
et Estonian
eu Basque
fa Persian
ff Fula
fi Finnish
fj Fijian
fo Faroese
fr French
fy Western Frisian
ga Irish
gd Scottish Gaelic
gl Galician
gn Guarani
gu Gujarati
gv Manx
ha Hausa
he Hebrew
hi Hindi
ho Hiri Motu
hr Croatian
ht Haitian Creole
hu Hungarian
hy Armenian
hz Herero
ia Interlingua
id Indonesian
ie Interlingue
ig Igbo
ii Sichuan Yi
ik Inupiaq
in Indonesian
io Ido
is Icelandic
it Italian
iu Inuktitut
iw Hebrew
ja Japanese
ji Yiddish
jv Javanese
jw Javanese
ka Georgian
kg Kongo
ki Kikuyu
kj Kuanyama
kk Kazakh
kl Kalaallisut
km Khmer
kn Kannada
ko Korean
kr Kanuri
ks Kashmiri
ku Kurdish
kv Komi
kw Cornish
ky Kyrgyz
la Latin
lb Luxembourgish
lg Ganda
li Limburgish
ln Lingala
lo Lao
lt Lithuanian
lu Luba-Katanga
lv Latvian
mg Malagasy
mh Marshallese
mi Māori
mk Macedonian
ml Malayalam
mn Mongolian
mo Romanian
mr Marathi
ms Malay
mt Maltese
my Burmese
na Nauru
nb Norwegian Bokmål
nd North Ndebele
ne Nepali
ng Ndonga
nl Dutch
nn Norwegian Nynorsk
no Norwegian
nr South Ndebele
nv Navajo
ny Nyanja
oc Occitan
oj Ojibwa
om Oromo
or Odia
os Ossetic
pa Punjabi
pi Pali
pl Polish
ps Pashto
pt Portuguese
qu Quechua
rm Romansh
rn Rundi
ro Romanian
ru Russian
rw Kinyarwanda
sa Sanskrit
sc Sardinian
sd Sindhi
se Northern Sami
sg Sango
sh Serbian (Latin)
si Sinhala
sk Slovak
sl Slovenian
sm Samoan
sn Shona
so Somali
sq Albanian
sr Serbian
ss Swati
st Southern Sotho
su Sundanese
sv Swedish
sw Swahili
ta Tamil
te Telugu
tg Tajik
th Thai
ti Tigrinya
tk Turkmen
tl Filipino
tn Tswana
to Tongan
tr Turkish
ts Tsonga
tt Tatar
tw Akan
ty Tahitian
ug Uyghur
uk Ukrainian
ur Urdu
uz Uzbek
ve Venda
vi Vietnamese
vo Volapük
wa Walloon
wo Wolof
xh Xhosa
yi Yiddish
yo Yoruba
za Zhuang
zh Chinese
zu Zulu`,
  3: `aar Afar
abk Abkhazian
ace Acehnese
ach Acoli
ada Adangme
adp Dzongkha
ady Adyghe
aeb Tunisian Arabic
afh Afrihili
afr Afrikaans
agq Aghem
ain Ainu
ajt Tunisian Arabic
aju Judeo-Arabic
aka Akan
akk Akkadian
akz Alabama
alb Albanian
ale Aleut
aln Gheg Albanian
als Albanian
alt Southern Altai
amh Amharic
ang Old English
ann Obolo
anp Angika
ara Arabic
arb Arabic
arc Aramaic
arg Aragonese
arm Armenian
arn Mapuche
aro Araona
arp Arapaho
arq Algerian Arabic
ars Najdi Arabic
arw Arawak
ary Moroccan Arabic
arz Egyptian Arabic
asa Asu
ase American Sign Language
asm Assamese
ast Asturian
atj Atikamekw
ava Avaric
ave Avestan
avk Kotava
awa Awadhi
aym Aymara
ayr Aymara
aze Azerbaijani
azj Azerbaijani
bak Bashkir
bal Baluchi
bam Bambara
ban Balinese
baq Basque
bar Bavarian
bas Basaa
bax Bamun
bbc Batak Toba
bbj Ghomala
bcc Baluchi
bcl Bikol
bej Beja
bel Belarusian
bem Bemba
ben Bangla
bew Betawi
bez Bena
bfd Bafut
bfq Badaga
bgc Haryanvi
bgn Western Balochi
bho Bhojpuri
bih Bhojpuri
bik Bikol
bin Bini
bis Bislama
bjn Banjar
bkm Kom
bla Siksiká
blg Iban
blo Anii
blt Tai Dam
bod Tibetan
bos Bosnian
bpy Bishnupriya
bqi Bakhtiari
bra Braj
bre Breton
brh Brahui
brx Bodo
bss Akoose
bua Buriat
bug Buginese
bul Bulgarian
bum Bulu
bur Burmese
bxk Luyia
bxr Buriat
byn Blin
byv Medumba
cad Caddo
car Carib
cat Catalan
cay Cayuga
cch Atsam
ccp Chakma
ceb Cebuano
ces Czech
cgg Chiga
cha Chamorro
chb Chibcha
che Chechen
chg Chagatai
chi Chinese
chk Chuukese
chm Mari
chn Chinook Jargon
cho Choctaw
chp Chipewyan
chr Cherokee
chu Church Slavic
chv Chuvash
chy Cheyenne
cic Chickasaw
ckb Central Kurdish
clc Chilcotin
cld Syriac
cls Sanskrit
cmn Chinese
cnr Montenegrin
cop Coptic
cor Cornish
cos Corsican
cps Capiznon
cre Cree
crg Michif
crh Crimean Tatar
crj Southern East Cree
crk Plains Cree
crl Northern East Cree
crm Moose Cree
crr Carolina Algonquian
crs Seselwa Creole French
csb Kashubian
csw Swampy Cree
cwd Cree
cym Welsh
cze Czech
dak Dakota
dan Danish
dar Dargwa
dav Taita
del Delaware
den Slave
deu German
dgo Dogri
dgr Dogrib
dhd Marwari
dik Dinka
din Dinka
diq Zaza
div Divehi
dje Zarma
doi Dogri
drh Mongolian
drw Dari
dsb Lower Sorbian
dtp Central Dusun
dua Duala
dum Middle Dutch
dut Dutch
dyo Jola-Fonyi
dyu Dyula
dzg Dazaga
dzo Dzongkha
ebu Embu
efi Efik
egl Emilian
egy Ancient Egyptian
eka Ekajuk
ekk Estonian
ell Greek
elx Elamite
emk Mandingo
eng English
enm Middle English
epo Esperanto
esk Inupiaq
est Estonian
esu Central Yupik
eus Basque
ewo Ewondo
ext Extremaduran
fan Fang
fao Faroese
fas Persian
fat Akan
fij Fijian
fil Filipino
fin Finnish
fit Tornedalen Finnish
fra French
frc Cajun French
fre French
frm Middle French
fro Old French
frp Arpitan
frr Northern Frisian
frs Eastern Frisian
fry Western Frisian
fuc Fula
ful Fula
fur Friulian
gaa Ga
gag Gagauz
gan Gan Chinese
gay Gayo
gaz Oromo
gba Gbaya
gbo Grebo
gbz Zoroastrian Dari
geo Georgian
ger German
gez Geez
gil Gilbertese
gla Scottish Gaelic
gle Irish
glg Galician
glk Gilaki
glv Manx
gmh Middle High German
gno Gondi
goh Old High German
gom Konkani
gon Gondi
gor Gorontalo
got Gothic
grb Grebo
grc Ancient Greek
gre Greek
grn Guarani
gsw Swiss German
guc Wayuu
gug Guarani
guj Gujarati
gur Frafra
guz Gusii
gwi Gwichʼin
gya Gbaya
hai Haida
hak Hakka Chinese
hat Haitian Creole
hau Hausa
haw Hawaiian
hax Southern Haida
hbs Serbian (Latin)
hdn Haida
hea Hmong
heb Hebrew
her Herero
hif Fiji Hindi
hil Hiligaynon
hin Hindi
hit Hittite
hmn Hmong
hmo Hiri Motu
hnj Hmong Njua
hrv Croatian
hsb Upper Sorbian
hsn Xiang Chinese
hun Hungarian
hup Hupa
hur Halkomelem
hye Armenian
iba Iban
ibb Ibibio
ibo Igbo
ice Icelandic
iii Sichuan Yi
ike Inuktitut
ikt Western Canadian Inuktitut
iku Inuktitut
ile Interlingue
ilo Iloko
ina Interlingua
ind Indonesian
inh Ingush
ipk Inupiaq
isl Icelandic
ita Italian
izh Ingrian
jam Jamaican Creole English
jav Javanese
jaw Javanese
jbo Lojban
jgo Ngomba
jmc Machame
jpn Japanese
jpr Judeo-Persian
jrb Judeo-Arabic
jut Jutish
kaa Kara-Kalpak
kab Kabyle
kac Kachin
kaj Jju
kal Kalaallisut
kam Kamba
kan Kannada
kas Kashmiri
kat Georgian
kau Kanuri
kaw Kawi
kaz Kazakh
kbd Kabardian
kbl Kanembu
kcg Tyap
kde Makonde
kea Kabuverdianu
kek Qʼeqchiʼ
ken Kenyang
kfo Koro
kgp Kaingang
kha Khasi
khk Mongolian
khm Khmer
kho Khotanese
khq Koyra Chiini
khw Khowar
kik Kikuyu
kin Kinyarwanda
kir Kyrgyz
kiu Kirmanjki
kkj Kako
kln Kalenjin
kmb Kimbundu
kmr Kurdish
knc Kanuri
kng Kongo
koi Komi-Permyak
kok Konkani
kom Komi
kon Kongo
kor Korean
kos Kosraean
kpe Kpelle
kpv Komi
krc Karachay-Balkar
kri Krio
krj Kinaray-a
krl Karelian
kru Kurukh
ksb Shambala
ksf Bafia
ksh Colognian
ktr Central Dusun
kua Kuanyama
kum Kumyk
kur Kurdish
kut Kutenai
kwk Kwakʼwala
kxl Kurukh
kxv Kuvi
kzj Central Dusun
kzt Central Dusun
lad Ladino
lag Langi
lah Western Panjabi
lam Lamba
lat Latin
lav Latvian
lez Lezghian
lfn Lingua Franca Nova
lij Ligurian
lil Lillooet
lim Limburgish
lin Lingala
lit Lithuanian
liv Livonian
lkt Lakota
lmo Lombard
lol Mongo
lou Louisiana Creole
loz Lozi
lrc Northern Luri
lsm Saamia
ltg Latgalian
ltz Luxembourgish
lua Luba-Lulua
lub Luba-Katanga
lug Ganda
lui Luiseno
lun Lunda
lus Mizo
luy Luyia
lvs Latvian
lzh Literary Chinese
lzz Laz
mac Macedonian
mad Madurese
maf Mafa
mag Magahi
mah Marshallese
mai Maithili
mak Makasar
mal Malayalam
man Mandingo
mao Māori
mar Marathi
mas Masai
may Malay
mde Maba
mdf Moksha
mdr Mandar
men Mende
mer Meru
mfe Morisyen
mga Middle Irish
mgh Makhuwa-Meetto
mgo Metaʼ
mhr Mari
mic Mi'kmaw
min Minangkabau
mkd Macedonian
mlg Malagasy
mlt Maltese
mnc Manchu
mni Manipuri
moe Innu-aimun
moh Mohawk
mol Romanian
mon Mongolian
mos Mossi
mri Māori
mrj Western Mari
msa Malay
mua Mundang
mul Multiple languages
mup Rajasthani
mus Muscogee
mwl Mirandese
mwr Marwari
mwv Mentawai
mya Burmese
mye Myene
myv Erzya
mzn Mazanderani
nan Min Nan Chinese
nap Neapolitan
naq Nama
nau Nauru
nav Navajo
nbl South Ndebele
nde North Ndebele
ndo Ndonga
nds Low German
nep Nepali
new Newari
nia Nias
niu Niuean
njo Ao Naga
nld Dutch
nmg Kwasio
nnh Ngiemboon
nno Norwegian Nynorsk
nob Norwegian Bokmål
nog Nogai
non Old Norse
nor Norwegian
nov Novial
npi Nepali
nqo N’Ko
nso Northern Sotho
nus Nuer
nwc Classical Newari
nya Nyanja
nym Nyamwezi
nyn Nyankole
nyo Nyoro
nzi Nzima
oci Occitan
ojb Northwestern Ojibwa
ojc Central Ojibwa
ojg Ojibwa
oji Ojibwa
ojs Oji-Cree
ojw Western Ojibwa
oka Okanagan
ori Odia
orm Oromo
ory Odia
osa Osage
oss Ossetic
ota Ottoman Turkish
pag Pangasinan
pal Pahlavi
pam Pampanga
pan Punjabi
pap Papiamento
pau Palauan
pbu Pashto
pcd Picard
pcm Nigerian Pidgin
pdc Pennsylvania German
pdt Plautdietsch
peo Old Persian
per Persian
pes Persian
pfl Palatine German
phn Phoenician
pis Pijin
pli Pali
plt Malagasy
pmk Carolina Algonquian
pms Piedmontese
pnb Western Panjabi
pnt Pontic
pol Polish
pon Pohnpeian
por Portuguese
pqm Maliseet-Passamaquoddy
prg Prussian
pro Old Provençal
prp Gujarati
prs Dari
pus Pashto
quc Kʼicheʼ
que Quechua
qug Chimborazo Highland Quichua
quz Quechua
raj Rajasthani
rap Rapanui
rar Rarotongan
rgn Romagnol
rhg Rohingya
rif Riffian
rmy Romany
rof Rombo
roh Romansh
rom Romany
ron Romanian
rtm Rotuman
rue Rusyn
rug Roviana
rum Romanian
run Rundi
rup Aromanian
rus Russian
rwk Rwa
sad Sandawe
sag Sango
sah Yakut
sam Samaritan Aramaic
san Sanskrit
saq Samburu
sas Sasak
sat Santali
saz Sourashtra
sba Ngambay
sbp Sangu
scc Serbian
scn Sicilian
sco Scots
scr Croatian
sdc Sassarese Sardinian
sdh Southern Kurdish
see Seneca
seh Sena
sei Seri
sel Selkup
ses Koyraboro Senni
sga Old Irish
sgs Samogitian
shi Tachelhit
shn Shan
shu Chadian Arabic
sid Sidamo
sin Sinhala
slh Southern Lushootseed
sli Lower Silesian
slk Slovak
slo Slovak
slv Slovenian
sly Selayar
sma Southern Sami
smd Kimbundu
sme Northern Sami
smj Lule Sami
smn Inari Sami
smo Samoan
sms Skolt Sami
sna Shona
snb Iban
snd Sindhi
snk Soninke
sog Sogdien
som Somali
sot Southern Sotho
spa Spanish
spy Kalenjin
sqi Albanian
src Sardinian
srd Sardinian
srn Sranan Tongo
srp Serbian
srr Serer
ssw Swati
ssy Saho
stq Saterland Frisian
str Straits Salish
suk Sukuma
sun Sundanese
sus Susu
sux Sumerian
swa Swahili
swb Comorian
swc Congo Swahili
swe Swedish
swh Swahili
syc Classical Syriac
syr Syriac
szl Silesian
tah Tahitian
tam Tamil
tat Tatar
tce Southern Tutchone
tcy Tulu
tdu Central Dusun
tel Telugu
tem Timne
teo Teso
ter Tereno
tet Tetum
tgk Tajik
tgl Filipino
tgx Tagish
tha Thai
tht Tahltan
tib Tibetan
tig Tigre
tir Tigrinya
tkl Tokelauan
tkr Tsakhur
tlh Klingon
tli Tlingit
tly Talysh
tmh Tamashek
tnf Dari
tog Nyasa Tonga
tok Toki Pona
ton Tongan
tpi Tok Pisin
tru Turoyo
trv Taroko
trw Torwali
tsd Tsakonian
tsi Tsimshian
tsn Tswana
tso Tsonga
ttm Northern Tutchone
ttq Tamashek
ttt Muslim Tat
tuk Turkmen
tum Tumbuka
tur Turkish
tvl Tuvalu
twi Akan
twq Tasawaq
tyv Tuvinian
tzm Central Atlas Tamazight
udm Udmurt
uga Ugaritic
uig Uyghur
ukr Ukrainian
umb Umbundu
umu Delaware
urd Urdu
uzb Uzbek
uzn Uzbek
vec Venetian
ven Venda
vep Veps
vie Vietnamese
vls West Flemish
vmf Main-Franconian
vmw Makhuwa
vol Volapük
vot Votic
vro Võro
vun Vunjo
wae Walser
wal Wolaytta
war Waray
was Washo
wbp Warlpiri
wel Welsh
wln Walloon
wol Wolof
wuu Wu Chinese
xal Kalmyk
xho Xhosa
xmf Mingrelian
xnr Kangri
xog Soga
xpe Kpelle
xsl Slave
yap Yapese
yav Yangben
ybb Yemba
ydd Yiddish
yid Yiddish
yor Yoruba
yrl Nheengatu
yue Cantonese
zai Zapotec
zap Zapotec
zbl Blissymbols
zea Zeelandic
zen Zenaga
zgh Standard Moroccan Tamazight
zha Zhuang
zho Chinese
zsm Malay
zul Zulu
zun Zuni
zxx No linguistic content
zyb Zhuang
zza Zaza`,
} as const;
